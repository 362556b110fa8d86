/** The environment a request acts in, decided by its API key's prefix (docs/decisions.md). */
export type Environment = 'test' | 'live';
export const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];
