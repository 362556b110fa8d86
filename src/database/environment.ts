/** The environment a request acts in, decided by its API key's prefix (SPEC §3). */
export type Environment = 'test' | 'live';
export const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];
