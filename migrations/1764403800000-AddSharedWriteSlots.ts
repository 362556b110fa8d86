import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A tenant's write slots across every instance (src/database/db.ts, "shared slots"): behind
 * a transaction pooler the instances share its server connections, and a write waiting on
 * a lock pins one, so a tenant's share must also hold across instances. Each slot is a
 * transaction-level advisory lock of the classid "KUWS" (advisory-locks.ts); this takes the
 * first free one of the tenant's, or fails at once with SQLSTATE KUW01 when every one is
 * held, so that nothing sent after it in the same message runs (and waits on a lock
 * holding a connection). One statement, sent with BEGIN: no round trip of its own.
 *
 * The provider's events about one order (tenant `order:<id>`) take their slot among the
 * order's merchant's: across instances, one hot merchant's own requests and the events
 * about its orders together hold no more than its share. (Per process they are two
 * tenants, which spares each delivery a read; here the read is one index probe, in the
 * same statement.)
 */
export class AddSharedWriteSlots1764403800000 implements MigrationInterface {
  name = 'AddSharedWriteSlots1764403800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION kuko_take_write_slot(tenant text, slots integer) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        holder text := tenant;
      BEGIN
        IF tenant LIKE 'order:%' THEN
          SELECT coalesce(min(merchant_id), tenant) INTO holder FROM orders WHERE id = substr(tenant, 7);
        END IF;
        FOR slot IN 0 .. slots - 1 LOOP
          IF pg_try_advisory_xact_lock(1263884115, hashtext(holder || '/' || slot)) THEN
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
