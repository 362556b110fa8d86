import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A tenant's write slots across every instance (src/database/shared-slots.ts): behind
 * a transaction pooler the instances share its server connections, and a write waiting on
 * a lock pins one, so a tenant's share must also hold across instances. Each slot is a
 * transaction-level advisory lock of the classid "KUWS" (advisory-locks.ts); this takes the
 * first free one of the tenant's, or fails at once with SQLSTATE KUW01 when every one is
 * held, so that nothing sent after it in the same message runs (and waits on a lock
 * holding a connection). One statement, sent with BEGIN: no round trip of its own.
 */
export class AddSharedWriteSlots1764403800000 implements MigrationInterface {
  name = 'AddSharedWriteSlots1764403800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION kuko_take_write_slot(tenant text, slots integer) RETURNS void
      LANGUAGE plpgsql AS $$
      BEGIN
        FOR slot IN 0 .. slots - 1 LOOP
          IF pg_try_advisory_xact_lock(1263884115, hashtext(tenant || '/' || slot)) THEN
            RETURN;
          END IF;
        END LOOP;
        RAISE EXCEPTION 'tenant % holds all % of its write slots', tenant, slots USING ERRCODE = 'KUW01';
      END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION kuko_take_write_slot(text, integer)`);
  }
}
