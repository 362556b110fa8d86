import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * The database pool's counters, from pg's public Pool fields. The one place that knows
 * where the pool lives (today TypeORM's driver holds it, as for Db): repoint it here when
 * the pool is exposed otherwise.
 */
export function poolStatsOf(dataSource: DataSource): () => PoolStats | null {
  return () => {
    const pool = (dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) return null;
    return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  };
}
