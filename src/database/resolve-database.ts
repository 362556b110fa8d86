import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres';
import { within } from './within';

export interface ResolvedDatabase {
  url: string;
  /** The embedded PostgreSQL this process started or adopted; null with DATABASE_URL. */
  embedded: EmbeddedDatabase | null;
}

/** DATABASE_URL when set; otherwise the embedded PostgreSQL of `npm start`, under .data/. */
export async function resolveDatabase(config: AppConfig, log: (message: string) => void): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: null };
  // Under the working directory: `npm start` runs from the project's, `node dist/main.js`
  // from wherever it is started, so the line names the whole path.
  const dir = join(process.cwd(), '.data');
  log(`DATABASE_URL is not set: using the embedded PostgreSQL under ${dir}/`);
  const embedded = await startEmbeddedPostgres({
    dir,
    durable: true,
    notice: log,
    startTimeoutMs: config.databaseStartTimeoutMs,
  });
  return { url: embedded.url, embedded };
}

/** How long a stop waits for an embedded PostgreSQL still starting (crash recovery, say). */
const STARTING_WAIT_MS = 30_000;

/**
 * The database of a start that a stop signal may end at any moment. An embedded
 * PostgreSQL still starting cannot be stopped yet, and exiting then would leave it running:
 * `stop()` waits until it is up, then stops it. Not for ever: past STARTING_WAIT_MS the
 * process exits anyway, and the next start adopts the server it left.
 */
export class StartingDatabase {
  private resolving: Promise<ResolvedDatabase> | null = null;

  resolve(config: AppConfig, log: (message: string) => void): Promise<ResolvedDatabase> {
    this.resolving = resolveDatabase(config, log);
    return this.resolving;
  }

  async stop(): Promise<void> {
    const starting = this.resolving?.catch(() => null) ?? Promise.resolve(null);
    const resolved = await within(starting, STARTING_WAIT_MS, () => null);
    await resolved?.embedded?.stop();
  }
}
