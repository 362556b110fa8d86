import type { Connection, Db } from './db';

/**
 * Every advisory lock the service takes, in one place, so no two uses can collide.
 *
 * PostgreSQL keeps the one-bigint form and the two-int form of advisory locks apart
 * (pg_locks.objsubid 1 and 2). Requests lock their Idempotency-Key with a bigint hash of
 * (merchant, environment, key), computed by PostgreSQL so that every instance agrees;
 * everything else uses the two-int form under the classid "KUKO", with one objid each,
 * so it can never meet a key's hash. Operators find them in pg_locks as classid/objid.
 */
export const LOCK_CLASS = 0x4b554b4f; // "KUKO"

export const ADVISORY_LOCKS = {
  /** Held by the one instance purging expired idempotency keys. */
  purge: { classid: LOCK_CLASS, objid: 1 },
  /** Serialises the first-run creation of the demo merchant across instances. */
  demoMerchant: { classid: LOCK_CLASS, objid: 2 },
  /** Serialises migrations: instances starting at once on an empty database run them one at a time. */
  migrations: { classid: LOCK_CLASS, objid: 3 },
} as const;

export type AdvisoryLock = (typeof ADVISORY_LOCKS)[keyof typeof ADVISORY_LOCKS];

/**
 * The classid ("KURF") of the transaction locks on a refund's out_refund_no, whose objid is
 * a hash of (merchant, environment, out_refund_no): apart from LOCK_CLASS's fixed locks, so
 * a refund can never wait on the purge. Two numbers sharing a hash only queue briefly.
 */
export const REFUND_NUMBER_LOCK_CLASS = 0x4b555246;

/**
 * The classid ("KUWS") of a tenant's write slots shared by every instance behind a
 * transaction pooler, whose objid is a hash of (tenant, slot): taken by the function
 * kuko_take_write_slot (migration AddSharedWriteSlots), which holds the number itself.
 */
export const SHARED_WRITE_SLOT_LOCK_CLASS = 0x4b555753;

/** SQL for the two-int lock of an out_refund_no, over three text parameters or expressions. */
export function refundNumberLockArgs(merchant: string, environment: string, outRefundNo: string): string {
  return `${REFUND_NUMBER_LOCK_CLASS}, hashtext(${merchant} || '/' || ${environment} || '/' || ${outRefundNo})`;
}

/** The SQL arguments of a two-int lock, e.g. `pg_try_advisory_lock(${lockArgs(lock)})`. */
export function lockArgs(lock: AdvisoryLock): string {
  return `${lock.classid}, ${lock.objid}`;
}

/** SQL for the bigint lock of an Idempotency-Key, over three text parameters or expressions. */
export function idempotencyKeyLockId(merchant: string, environment: string, key: string): string {
  return `hashtextextended(${merchant} || '/' || ${environment} || '/' || ${key}, 0)`;
}

/** Takes a session-level lock on this connection if free; never waits. */
export async function tryLockSession(connection: Connection, lock: AdvisoryLock): Promise<boolean> {
  const [row] = await connection.rows<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${lockArgs(lock)}) AS locked`);
  return row.locked === true;
}

/** Releases a session-level lock; false if this session did not hold it. */
export async function unlockSession(connection: Connection, lock: AdvisoryLock): Promise<boolean> {
  const [row] = await connection.rows<{ unlocked: boolean }>(
    `SELECT pg_advisory_unlock(${lockArgs(lock)}) AS unlocked`,
  );
  return row.unlocked === true;
}

/** Waits for a transaction-level lock; it frees itself at commit or rollback. */
export async function lockTransaction(db: Db, lock: AdvisoryLock): Promise<void> {
  await db.rows(`SELECT pg_advisory_xact_lock(${lockArgs(lock)})`);
}

/** Takes a transaction-level lock if free; never waits. It frees itself at commit or rollback. */
export async function tryLockTransaction(db: Db, lock: AdvisoryLock): Promise<boolean> {
  const row = await db.one<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(${lockArgs(lock)}) AS locked`);
  return row?.locked === true;
}
