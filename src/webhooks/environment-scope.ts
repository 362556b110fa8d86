import type { Db } from '../database/db';
import { ENVIRONMENTS, Environment } from '../domain/environment';
import type { EventOutcome } from './webhook-event-handler';

/**
 * An event signed only by a test secret may touch test objects only, and a live one live
 * objects only (docs/webhooks.md). Handlers learn an object's environment when they lock
 * it, so the handler runs after a savepoint: if the object it touched is of another
 * environment, its changes are rolled back and the event is recorded as rejected with the
 * reason. Events signed by a secret of both environments skip the savepoint altogether.
 */
export async function applyWithinEnvironments(
  db: Db,
  environments: ReadonlySet<Environment>,
  apply: () => Promise<EventOutcome>,
): Promise<EventOutcome> {
  if (ENVIRONMENTS.every((environment) => environments.has(environment))) return apply();
  await db.rows('SAVEPOINT webhook_environment');
  const outcome = await apply();
  if (outcome.environment !== undefined && environments.has(outcome.environment)) return outcome;
  // Nothing touched (an unknown type, an event ignored before any object was found) is fine;
  // a change whose environment the handler did not report cannot be allowed.
  if (outcome.environment === undefined && outcome.status === 'ignored') return outcome;
  await db.rows('ROLLBACK TO SAVEPOINT webhook_environment');
  const signedFor = [...environments].join(' and ');
  return {
    ...outcome,
    status: 'rejected',
    reason: `the event is signed with a ${signedFor} secret only and may not touch a ${outcome.environment ?? 'unknown'} object`,
  };
}
