/** Classifies errors from pg / TypeORM by SQLSTATE and network error codes. */

const SERIALIZATION_FAILURES = new Set(['40001', '40P01']);
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '08000',
  '08001',
  '08003',
  '08004',
  '08006', // connection exceptions
  '53300', // too_many_connections
]);
/**
 * PgBouncer closes a client connection with a protocol_violation (08P01) and these words;
 * PostgreSQL's own 08P01 errors (a Bind with the wrong number of parameters) are bugs.
 */
const POOLER_CLOSING = /server shutting down|server conn crashed|query_wait_timeout|cannot connect to server/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH']);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error',
  'Client was closed',
];
/**
 * A server that answers and refuses who is connecting, or to what: the password, the role,
 * pg_hba.conf, a database that does not exist. Asking again gets the same answer.
 */
const REFUSED_CONNECTION_SQLSTATES = new Set(['28000', '28P01', '3D000']);
/** pg-pool's words when no connection could be lent in time. */
const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

/** Thrown when a request waited too long for a write slot (Db): the database is busy. */
export class DatabaseBusyError extends Error {}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const direct = (error as { code?: unknown }).code;
  if (typeof direct === 'string') return direct;
  // TypeORM wraps driver errors in QueryFailedError with the original as driverError.
  const driver = (error as { driverError?: { code?: unknown } }).driverError?.code;
  return typeof driver === 'string' ? driver : undefined;
}

/** A unique violation, optionally of one named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (codeOf(error) !== '23505') return false;
  return constraint === undefined || (error as { constraint?: string }).constraint === constraint;
}

export function isSerializationFailure(error: unknown): boolean {
  return SERIALIZATION_FAILURES.has(codeOf(error) ?? '');
}

/** Why the database could not serve a request in time (see isDatabaseBusy). */
export type BusyCause = 'lock_timeout' | 'statement_timeout' | 'no_write_slot' | 'no_connection';

const BUSY_CAUSES: Record<string, BusyCause> = { '55P03': 'lock_timeout', '57014': 'statement_timeout' };

/**
 * The database answers but cannot serve this request in time: a lock wait or statement
 * outlasted its timeout, or no connection or write slot could be had. Nothing was
 * changed (the transaction rolled back), so the request is worth retrying as it is.
 */
export function isDatabaseBusy(error: unknown): boolean {
  return busyCause(error) !== null;
}

/**
 * The busy causes that are load shed as designed (one hot row, a full pool), not faults:
 * a statement cut off by statement_timeout (60 s) is a defect such as a bad plan.
 */
export function loadShedCause(error: unknown): Exclude<BusyCause, 'statement_timeout'> | null {
  const cause = busyCause(error);
  return cause === 'statement_timeout' ? null : cause;
}

function busyCause(error: unknown): BusyCause | null {
  if (error instanceof DatabaseBusyError) return 'no_write_slot';
  const cause = BUSY_CAUSES[codeOf(error) ?? ''];
  if (cause) return cause;
  return error instanceof Error && error.message.includes(POOL_TIMEOUT_MESSAGE) ? 'no_connection' : null;
}

/**
 * A prepared statement whose result columns a schema change altered (a column's type,
 * say): PostgreSQL refuses to run its cached plan. Nothing ran; planned afresh, the
 * statement works (Db does that).
 */
export function isStalePlan(error: unknown): boolean {
  if (codeOf(error) !== '0A000' || !(error instanceof Error)) return false;
  // The routine that raises it names it in any language the server speaks (lc_messages).
  const routine = (error as { routine?: unknown }).routine;
  return routine === 'RevalidateCachedQuery' || error.message.includes('cached plan must not change result type');
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  if (code && (UNAVAILABLE_SQLSTATES.has(code) || NETWORK_CODES.has(code))) return true;
  const message = error instanceof Error ? error.message : '';
  if (code === '08P01' && POOLER_CLOSING.test(message)) return true;
  return UNAVAILABLE_MESSAGES.some((fragment) => message.includes(fragment));
}

/**
 * The server refused the connection for a reason only its configuration can change
 * (REFUSED_CONNECTION_SQLSTATES), directly or as the cause of a start-up error: not worth
 * trying again at start-up.
 */
export function isRefusedConnection(error: unknown): boolean {
  for (let each = error; each instanceof Error; each = each.cause) {
    if (REFUSED_CONNECTION_SQLSTATES.has(codeOf(each) ?? '')) return true;
  }
  return false;
}

/**
 * Why a connection or a statement failed, in words an operator can act on (the readiness
 * check's 503): fixed phrases, never an address, a user name or SQL.
 */
export function unavailableReason(error: unknown): string {
  const code = codeOf(error) ?? '';
  const message = error instanceof Error ? error.message : '';
  if (code === 'ECONNREFUSED')
    return 'refused the connection: it is not running, or not listening at the configured address';
  if (code === 'ENOTFOUND' || code === 'EHOSTUNREACH') {
    return 'could not be reached: its host name does not resolve, or no route leads to it';
  }
  if (code === '57P03') return 'is starting up, shutting down or in recovery';
  // Also what pg_terminate_backend() and DROP DATABASE … WITH (FORCE) send.
  if (code === '57P01') return 'ended the connection: the server is shutting down, or the session was terminated';
  if (code === '57P02') return 'is restarting after a crash';
  if (code === '53300') return "has no free connection slots (max_connections, or the role's or database's limit)";
  if (isRefusedConnection(error)) return "refused this service's credentials or database name";
  if (code === '08P01' && POOLER_CLOSING.test(message)) {
    return 'could not be reached through the connection pooler: it cannot connect to the server, or is stopping';
  }
  return 'failed the check: the connection was lost or refused';
}
