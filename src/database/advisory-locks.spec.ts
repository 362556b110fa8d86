import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_CLASS, REFUND_NUMBER_LOCK_CLASS, SHARED_WRITE_SLOT_LOCK_CLASS } from './advisory-locks';

describe('advisory lock classes', () => {
  it('are distinct, so no two uses can meet', () => {
    const classes = [LOCK_CLASS, REFUND_NUMBER_LOCK_CLASS, SHARED_WRITE_SLOT_LOCK_CLASS];
    expect(new Set(classes).size).toBe(classes.length);
  });

  // The migration holds the number itself (a migration must not change when the code
  // does); what reads pg_locks by the constant would miss the slots if the two parted.
  it('the shared write slots the migration takes are of SHARED_WRITE_SLOT_LOCK_CLASS', () => {
    const migration = readFileSync(
      join(__dirname, '..', '..', 'migrations', '1764403800000-AddSharedWriteSlots.ts'),
      'utf8',
    );
    expect(migration.match(/pg_try_advisory_xact_lock\((\d+),/)?.[1]).toBe(String(SHARED_WRITE_SLOT_LOCK_CLASS));
  });
});
