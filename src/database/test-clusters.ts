/**
 * Throw-away PostgreSQL clusters for tests and harnesses, under .data/test/<owner pid>-…
 * A cluster whose owning process died (a killed test run) is stopped and removed the
 * next time one is created, so nothing piles up and no stray server keeps running.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { EmbeddedDatabase, isAlive, startEmbeddedPostgres } from './embedded-postgres';
import { isPostmasterOf } from './postmaster-process';

export function testClustersRoot(): string {
  return join(process.cwd(), '.data', 'test');
}

/**
 * `durable`: PostgreSQL's own fsync, synchronous_commit and full_page_writes (the bench
 * measures with them, as production runs); by default the faster test settings.
 */
export async function startTestCluster(
  label = 'cluster',
  options: { durable?: boolean } = {},
): Promise<EmbeddedDatabase & { dir: string }> {
  await removeOrphanedClusters();
  const dir = join(testClustersRoot(), `${process.pid}-${label}-${randomBytes(4).toString('hex')}`);
  const database = await startEmbeddedPostgres({ dir, durable: options.durable ?? false, ownSession: false });
  return {
    ...database,
    dir,
    stop: async () => {
      await database.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function removeOrphanedClusters(): Promise<void> {
  const root = testClustersRoot();
  if (!existsSync(root)) return;
  for (const entry of await readdir(root)) {
    const owner = Number(entry.split('-')[0]);
    if (!owner || isAlive(owner)) continue;
    const pidFile = join(root, entry, 'pg', 'postmaster.pid');
    if (existsSync(pidFile)) {
      const postmaster = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
      // Only a postgres serving that very cluster: the PID may have been reused since.
      if (postmaster && isAlive(postmaster) && isPostmasterOf(postmaster, join(root, entry, 'pg'))) {
        process.kill(postmaster, 'SIGQUIT');
      }
    }
    await rm(join(root, entry), { recursive: true, force: true });
  }
}
