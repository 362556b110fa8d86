import { join } from 'node:path';
import type { AppConfig } from '../config/app-config';
import { EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres';

/** DATABASE_URL when set; otherwise the embedded PostgreSQL of `npm start`, under .data/. */
export async function resolveDatabase(
  config: AppConfig,
  log: (message: string) => void,
): Promise<{ url: string; embedded: EmbeddedDatabase | null }> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: null };
  log('DATABASE_URL is not set: using the embedded PostgreSQL under .data/');
  const embedded = await startEmbeddedPostgres({ dir: join(process.cwd(), '.data'), durable: true, notice: log });
  return { url: embedded.url, embedded };
}
