export interface PgBouncer {
  /** The upstream URL with PgBouncer's host and port. */
  url: string;
  version: string;
  /** Whether it keeps protocol-level prepared statements (1.21 and later). */
  prepared: boolean;
  pid: number;
  stop(): Promise<void>;
}
export function pgBouncerBinary(): { binary: string; version: string; prepared: boolean };
export function startPgBouncer(upstreamUrl: string, options?: { poolSize?: number }): Promise<PgBouncer>;
