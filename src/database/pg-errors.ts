/** Classifies errors from pg / TypeORM by SQLSTATE and network error codes. */

const SERIALIZATION_FAILURES = new Set(['40001', '40P01']);
/** What the readiness check says when nothing more precise is known. */
const LOST_OR_REFUSED = 'failed the check: the connection was lost or refused';
const UNREACHABLE = 'could not be reached: its host name does not resolve, or no route leads to it';
export const READ_ONLY =
  'is read-only: a standby, a primary demoted after a failover, or default_transaction_read_only is on';
/** ALLOW_CONNECTIONS false (55000, raised where PostgreSQL checks the database a connection asks for). */
const NOT_ACCEPTING = 'does not accept connections to this database now (ALTER DATABASE … ALLOW_CONNECTIONS false)';
/**
 * A server that answers and refuses who is connecting, or to what: the password, the role,
 * pg_hba.conf, a database that does not exist. Asking again gets the same answer.
 */
const REFUSED_CONNECTION_SQLSTATES = new Set(['28000', '28P01', '3D000']);
/**
 * Node's codes for a server certificate that TLS verification refused (`sslmode=require`,
 * `verify-ca`, `verify-full`): not issued by a trusted authority, expired or not yet
 * valid, revoked, or issued for another host. Only a new certificate, `sslrootcert` or
 * the URL's host changes that answer.
 */
const CERTIFICATE_REFUSED_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'CERT_CHAIN_TOO_LONG',
  'HOSTNAME_MISMATCH',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'CRL_SIGNATURE_FAILURE',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_CERT_ALTNAME_FORMAT',
]);
/**
 * OpenSSL's refusals of the handshake itself (Node's `ERR_SSL_…` codes): TLS asked of a
 * port that does not speak it, a client certificate the server asks for and is not sent.
 */
const TLS_HANDSHAKE_CODE_PREFIX = 'ERR_SSL_';
const TLS_HANDSHAKE_FAILED =
  'failed the TLS handshake: it does not speak TLS on that port, or asks for a client certificate this service does not send';
const REFUSED_CREDENTIALS = "refused this service's credentials or database name";
const REFUSED_CERTIFICATE =
  'offered a TLS certificate this service refuses: not from an authority it trusts (sslrootcert), expired, or for another host';
/**
 * Every SQLSTATE and network error code that means the database cannot serve now but may
 * soon (a request answers 503 with Retry-After), each with the reason the readiness check
 * gives for it: fixed phrases an operator can act on, never an address, a user or SQL.
 */
const UNAVAILABLE_CODES = new Map<string, string>([
  ['ECONNREFUSED', 'refused the connection: it is not running, or not listening at the configured address'],
  ['ENOTFOUND', UNREACHABLE],
  ['EHOSTUNREACH', UNREACHABLE],
  ['ECONNRESET', LOST_OR_REFUSED],
  ['EPIPE', LOST_OR_REFUSED],
  ['ETIMEDOUT', LOST_OR_REFUSED],
  // admin_shutdown; also what pg_terminate_backend() and DROP DATABASE … WITH (FORCE) send
  ['57P01', 'ended the connection: the server is shutting down, or the session was terminated'],
  ['57P02', 'is restarting after a crash'], // crash_shutdown
  ['57P03', 'is starting up, shutting down or in recovery'], // cannot_connect_now
  ['53300', "has no free connection slots (max_connections, or the role's or database's limit)"],
  // The server ended a session that sat idle too long: inside a transaction between two of
  // its statements (the transaction rolled back), or between transactions.
  ['25P03', 'ended the connection: a transaction sat idle longer than idle_in_transaction_session_timeout'],
  ['57P05', 'ended the connection: it sat idle longer than idle_session_timeout'],
  // A standby, or a primary demoted after a failover: a write is refused, nothing changed.
  ['25006', READ_ONLY],
  ['08000', LOST_OR_REFUSED], // connection exceptions, 08000–08006
  ['08001', LOST_OR_REFUSED],
  ['08003', LOST_OR_REFUSED],
  ['08004', LOST_OR_REFUSED],
  ['08006', LOST_OR_REFUSED],
  // A server that refuses who connects, or to what (REFUSED_CONNECTION_SQLSTATES), or a
  // certificate TLS refuses: a new connection cannot be opened until an operator acts
  // (a rotated password, a dropped grant, a renewed certificate), so requests that need
  // one answer 503 meanwhile, as they would with the server down.
  ...[...REFUSED_CONNECTION_SQLSTATES].map((code): [string, string] => [code, REFUSED_CREDENTIALS]),
  ...[...CERTIFICATE_REFUSED_CODES].map((code): [string, string] => [code, REFUSED_CERTIFICATE]),
]);
/**
 * PgBouncer answers a client it cannot serve with a protocol_violation (08P01) and these
 * words: it is stopping, it lost or cannot reach PostgreSQL (after a failed login it
 * answers from the cached failure for server_login_retry), or it is full. PostgreSQL's
 * own 08P01 errors (a Bind with the wrong number of parameters) are bugs.
 */
const POOLER_UNAVAILABLE = new RegExp(
  [
    'server shutting down',
    'server conn crashed',
    // Its write to a server connection that had just died; its settings for this client
    // refused by a server that was dying (a backend terminated, PostgreSQL restarting).
    'server connection closed',
    'invalid server parameter',
    'query_wait_timeout',
    'cannot connect to server',
    'server login has been failing',
    'client_login_timeout',
    'no more connections allowed',
  ].join('|'),
);
/** pg's words when a statement got no answer within the pool's query_timeout (data-source-options.ts). */
const CLIENT_TIMEOUT_MESSAGE = 'Query read timeout';
const UNAVAILABLE_MESSAGES = [
  CLIENT_TIMEOUT_MESSAGE,
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error',
  'Client was closed',
];
/** pg-pool's words when no connection could be lent in time. */
const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

/** Thrown when a request waited too long for a write slot (Db): the database is busy. */
export class DatabaseBusyError extends Error {}

/** kuko_take_write_slot's refusal: every one of the tenant's shared write slots is held (Db). */
export function isSharedSlotTaken(error: unknown): boolean {
  return codeOf(error) === 'KUW01';
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const direct = (error as { code?: unknown }).code;
  if (typeof direct === 'string') return direct;
  // TypeORM wraps driver errors in QueryFailedError with the original as driverError.
  const driver = (error as { driverError?: { code?: unknown } }).driverError?.code;
  return typeof driver === 'string' ? driver : undefined;
}

/** A table the statement names does not exist (42P01), directly or as a cause: a database never migrated. */
export function isUndefinedTable(error: unknown): boolean {
  return anyCause(error, (each) => codeOf(each) === '42P01');
}

/** A write refused because the session is read-only (25006): a standby, a demoted primary. */
export function isReadOnly(error: unknown): boolean {
  return codeOf(error) === '25006';
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

/** The database cannot serve now but may soon: the request answers 503 with Retry-After. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return unavailability(error) !== null;
}

/**
 * A statement that failed but may succeed as it is, tried again a little later: the
 * database is away (isDatabaseUnavailable), too busy or cancelled (isDatabaseBusy: a lock
 * or statement timeout, pg_cancel_backend), a concurrent transaction won (a deadlock or a
 * serialization failure), or a schema change made its plan stale. Everything a request
 * answers 503 for (error-response.ts); anything else is a bug or a refusal of the
 * statement itself, which the same statement meets again.
 */
export function isWorthTryingAgain(error: unknown): boolean {
  return isDatabaseUnavailable(error) || isDatabaseBusy(error) || isSerializationFailure(error) || isStalePlan(error);
}

/**
 * A start-up's failure, directly or as its cause, that waiting may change: the database
 * is starting, restarting, not reachable yet, or PgBouncer is still retrying its login
 * (isWorthTryingAgain), and not a refusal no wait changes (isPermanentConnectFailure).
 */
export function isPassingAtStart(error: unknown): boolean {
  return anyCause(error, isWorthTryingAgain) && !isPermanentConnectFailure(error);
}

/**
 * What a start-up meets that no retry changes: startup options PostgreSQL refuses
 * (DATABASE_URL's `options`): a setting it does not know (undefined_object), a value it
 * cannot take (invalid_parameter_value), an option it cannot read (`--foo` with no value:
 * syntax_error); and a search_path naming no schema the migrations can create in
 * (invalid_schema_name).
 */
const REFUSED_OPTION_SQLSTATES = new Set(['42704', '22023', '42601', '3F000']);
/** pg's words when the URL asks for TLS and the server offers none. */
const NO_TLS_MESSAGE = 'The server does not support SSL connections';

/**
 * A failure to connect that asking again cannot change, directly or as the cause of a
 * start-up error: refused credentials or database name (isRefusedConnection), refused
 * options, TLS asked of a server without it, a server certificate TLS refused. Start-up
 * says it once instead of retrying.
 */
export function isPermanentConnectFailure(error: unknown): boolean {
  return anyCause(
    error,
    (each) =>
      isConnectionRefusal(each) ||
      isTlsFailure(each) ||
      REFUSED_OPTION_SQLSTATES.has(codeOf(each) ?? '') ||
      each.message.includes(NO_TLS_MESSAGE),
  );
}

/**
 * A new connection refused: the server or the pooler refused who connects or to what
 * (isRefusedConnection), or TLS refused the server's certificate. Each happens only while
 * a connection opens, before anything is sent on it, so nothing ran.
 */
export function isConnectionRefusal(error: unknown): boolean {
  return isRefusedConnection(error) || CERTIFICATE_REFUSED_CODES.has(codeOf(error) ?? '');
}

/**
 * OpenSSL's own failures (TLS_HANDSHAKE_CODE_PREFIX): mostly a refused handshake, but one
 * can also end a connection already in use, so it is not counted as refused before
 * anything ran.
 */
function isTlsFailure(error: unknown): boolean {
  return (codeOf(error) ?? '').startsWith(TLS_HANDSHAKE_CODE_PREFIX);
}

/** Whether the error, or any error in its chain of causes, is one `test` accepts. */
function anyCause(error: unknown, test: (each: Error) => boolean): boolean {
  for (let each = error; each instanceof Error; each = each.cause) if (test(each)) return true;
  return false;
}

/**
 * The server, or the pooler in front of it, refused the connection for a reason only its
 * configuration can change (REFUSED_CONNECTION_SQLSTATES, POOLER_REFUSED), directly or as
 * the cause of a start-up error: not worth trying again at start-up.
 */
export function isRefusedConnection(error: unknown): boolean {
  return anyCause(
    error,
    (each) => REFUSED_CONNECTION_SQLSTATES.has(codeOf(each) ?? '') || poolerSays(each, POOLER_REFUSED),
  );
}

/**
 * Why a connection or a statement failed, in words an operator can act on (the readiness
 * check's 503): fixed phrases, never an address, a user name or SQL.
 */
export function unavailableReason(error: unknown): string {
  return unavailability(error) ?? LOST_OR_REFUSED;
}

/**
 * The one classification behind both: the reason the database cannot serve now, or null
 * when the error is not of that kind (a bug, or a refusal of the request itself).
 */
function unavailability(error: unknown): string | null {
  const known = UNAVAILABLE_CODES.get(codeOf(error) ?? '');
  if (known) return known;
  // 55000 is object_not_in_prerequisite_state, of many statements; the routine that checks
  // a new connection's database names this one in any language the server speaks.
  if (codeOf(error) === '55000' && (error as { routine?: unknown }).routine === 'CheckMyDatabase') return NOT_ACCEPTING;
  if (isRefusedConnection(error)) return REFUSED_CREDENTIALS;
  if (isTlsFailure(error)) return TLS_HANDSHAKE_FAILED;
  if (isClientTimeout(error)) return 'stopped answering: frozen, overloaded, or cut off by the network';
  if (poolerSays(error, POOLER_UNAVAILABLE)) {
    return 'could not be reached through the connection pooler: it cannot connect to the server, is full, or is stopping';
  }
  const message = error instanceof Error ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((fragment) => message.includes(fragment)) ? LOST_OR_REFUSED : null;
}

/**
 * PgBouncer's own refusals of who connects, or to what (its auth_file or auth_query, its
 * [databases]), sent as protocol_violation (08P01) like everything it says.
 */
const POOLER_REFUSED = new RegExp(
  '^(' +
    [
      'no such database',
      'no such user',
      'password authentication failed',
      'SASL authentication failed',
      'server login failed: wrong password type',
      // PostgreSQL's own refusals, which PgBouncer before 1.20 relays as 08P01 too
      // (in English, as PostgreSQL's lc_messages writes them by default).
      'database ".*" does not exist',
      'role ".*" does not exist',
      'no pg_hba\\.conf entry',
      'pg_hba\\.conf rejects',
    ].join('|') +
    ')',
);

/** PgBouncer said it (protocol_violation, 08P01, is all it sends) in words `pattern` matches. */
function poolerSays(error: unknown, pattern: RegExp): boolean {
  return codeOf(error) === '08P01' && error instanceof Error && pattern.test(error.message);
}

/**
 * A statement that got no answer in time on the client's side: the connection still waits
 * for it, so it can carry nothing else (not even a ROLLBACK) and must be ended.
 */
export function isClientTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === CLIENT_TIMEOUT_MESSAGE;
}
