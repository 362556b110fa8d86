import { toErrorResponse } from '../common/errors/error-response';
import {
  isClientTimeout,
  isDatabaseUnavailable,
  isPermanentConnectFailure,
  isStalePlan,
  isWorthTryingAgain,
  unavailableReason,
} from './pg-errors';

/** An error as pg reports one from the server: its message and SQLSTATE. */
function serverError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('database errors', () => {
  it('stop a start-up at once on options and a search_path no retry can change', () => {
    for (const [message, code] of [
      ['unrecognized configuration parameter "lock_timeot"', '42704'],
      ['invalid value for parameter "lock_timeout": "soon"', '22023'],
      ['--foo requires a value', '42601'],
      ['no schema has been selected to create in', '3F000'],
    ]) {
      const cause = serverError(message, code);
      expect(isPermanentConnectFailure(new Error('DATABASE_URL (app@db:5432/kukopay)', { cause }))).toBe(true);
    }
    expect(isPermanentConnectFailure(serverError('the database system is starting up', '57P03'))).toBe(false);
  });

  it('tell a plan made stale by a schema change from other unsupported features', () => {
    expect(isStalePlan(serverError('cached plan must not change result type', '0A000'))).toBe(true);
    expect(isStalePlan(serverError('cannot use subquery in default expression', '0A000'))).toBe(false);
    expect(isStalePlan(serverError('cached plan must not change result type', 'XX000'))).toBe(false);
    // By the routine that raises it, whatever language the server's messages are in.
    const translated = Object.assign(serverError('le plan en cache ne doit pas changer le type', '0A000'), {
      routine: 'RevalidateCachedQuery',
    });
    expect(isStalePlan(translated)).toBe(true);
  });

  it('answer a stale plan 503 with Retry-After: nothing ran, the next attempt is planned afresh', () => {
    const response = toErrorResponse(serverError('cached plan must not change result type', '0A000'), 'req_1');
    expect(response.status).toBe(503);
    expect(response.headers).toEqual({ 'Retry-After': '1' });
    expect(response.json).toContain('service_unavailable');
  });

  it('count PgBouncer closing a connection ("server shutting down", 08P01) as the database unavailable', () => {
    const closing = serverError('server shutting down', '08P01');
    expect(isDatabaseUnavailable(closing)).toBe(true);
    expect(toErrorResponse(closing, 'req_2').status).toBe(503);
    // PostgreSQL's own protocol violations are bugs: 500, not "retry".
    const bug = serverError('bind message supplies 2 parameters, but prepared statement "s" requires 3', '08P01');
    expect(isDatabaseUnavailable(bug)).toBe(false);
    expect(toErrorResponse(bug, 'req_3').status).toBe(500);
  });

  it.each([
    ['connect ECONNREFUSED 10.0.0.7:5432', 'ECONNREFUSED', /^refused the connection: it is not running/],
    ['the database system is starting up', '57P03', /^is starting up, shutting down or in recovery$/],
    ['sorry, too many clients already', '53300', /^has no free connection slots/],
    ['password authentication failed for user "kuko"', '28P01', /^refused this service's credentials/],
    ['database "kuko" does not exist', '3D000', /^refused this service's credentials or database name$/],
    ['getaddrinfo ENOTFOUND db.kuko.internal', 'ENOTFOUND', /^could not be reached: its host name does not resolve/],
    ['terminating connection due to administrator command', '57P01', /^ended the connection/],
    ['server conn crashed?', '08P01', /^could not be reached through the connection pooler/],
    [
      'server login has been failing, cached error: connect failed (server_login_retry)',
      '08P01',
      /^could not be reached through the connection pooler/,
    ],
    [
      'server login has been failing, try again later (server_login_retry)',
      '08P01',
      /^could not be reached through the connection pooler/,
    ],
    ['no more connections allowed (max_client_conn)', '08P01', /^could not be reached through the connection pooler/],
    ['server connection closed', '08P01', /^could not be reached through the connection pooler/],
    ['invalid server parameter', '08P01', /^could not be reached through the connection pooler/],
    // PgBouncer's own refusals, by its auth_file or auth_query and its [databases].
    ['password authentication failed', '08P01', /^refused this service's credentials or database name$/],
    ['no such database: kukopay', '08P01', /^refused this service's credentials or database name$/],
  ])('say why the database is unavailable, in fixed words (%s)', (message, code, reason) => {
    expect(unavailableReason(serverError(message, code))).toMatch(reason);
  });

  it.each([
    ['read ECONNRESET', 'ECONNRESET', 'failed the check: the connection was lost or refused'],
    ['terminating connection because of crash of another server process', '57P02', 'is restarting after a crash'],
    ['connection failure', '08006', 'failed the check: the connection was lost or refused'],
    // A new connection refused while serving: a password rotated on one side only, a
    // certificate expired or replaced. Nothing ran; the request can be retried later.
    ['password authentication failed for user "kuko"', '28P01', "refused this service's credentials or database name"],
    [
      'certificate has expired',
      'CERT_HAS_EXPIRED',
      expect.stringMatching(/^offered a TLS certificate this service refuses/),
    ],
    [
      "Hostname/IP does not match certificate's altnames",
      'ERR_TLS_CERT_ALTNAME_INVALID',
      expect.stringMatching(/^offered a TLS certificate this service refuses/),
    ],
  ])(
    'count what the readiness check names a reason for as unavailable to requests too (%s)',
    (message, code, reason) => {
      const error = serverError(message, code);
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(toErrorResponse(error, 'req_4').status).toBe(503);
      expect(unavailableReason(error)).toEqual(reason);
    },
  );

  it("take PgBouncer's own refusals as final at start-up and as 503 while serving; its passing failures as neither final nor bugs", () => {
    for (const message of [
      'password authentication failed',
      'no such database: kukopay',
      'no such user',
      // PostgreSQL's refusals as PgBouncer before 1.20 relays them.
      'database "kukopay" does not exist',
      'no pg_hba.conf entry for host "10.0.0.5", user "app", database "kukopay", no encryption',
    ]) {
      const refused = serverError(message, '08P01');
      // At start-up the driver's error arrives as the cause of TypeORM's or ours.
      expect(
        isPermanentConnectFailure(new Error('DATABASE_URL (app@pgbouncer:6432/kukopay)', { cause: refused })),
      ).toBe(true);
      expect(isDatabaseUnavailable(refused)).toBe(true);
      const response = toErrorResponse(refused, 'req_6');
      expect(response.status).toBe(503);
      expect(response.json).toContain('refused this service');
      expect(response.json).toContain('nothing was changed');
    }
    for (const message of [
      'server login has been failing, cached error: password authentication failed (server_login_retry)',
      'server connection closed',
      'invalid server parameter',
    ]) {
      const passing = serverError(message, '08P01');
      expect(isPermanentConnectFailure(passing)).toBe(false);
      expect(toErrorResponse(passing, 'req_7').status).toBe(503);
    }
  });

  it('take a TLS handshake refused (no TLS on that port, a client certificate asked for) as final and as 503', () => {
    const handshake = serverError('wrong version number', 'ERR_SSL_WRONG_VERSION_NUMBER');
    expect(isPermanentConnectFailure(new Error('DATABASE_URL (app@db:5432/kukopay)', { cause: handshake }))).toBe(true);
    const response = toErrorResponse(handshake, 'req_8');
    expect(response.status).toBe(503);
    // OpenSSL can end a connection in use the same way: the answer does not claim nothing ran.
    expect(response.json).toContain('may have been carried out');
    expect(unavailableReason(handshake)).toMatch(/^failed the TLS handshake/);
  });

  it('count a statement that got no answer in time as the database unavailable, one that stopped answering', () => {
    const late = new Error('Query read timeout');
    expect(isClientTimeout(late)).toBe(true);
    expect(isDatabaseUnavailable(late)).toBe(true);
    expect(toErrorResponse(late, 'req_5').status).toBe(503);
    expect(unavailableReason(late)).toMatch(/^stopped answering/);
  });

  it('take exactly what a request answers 503 for as worth trying again: a deadlock, a cancel, a timeout, an outage', () => {
    const passing = [
      serverError('deadlock detected', '40P01'),
      serverError('could not serialize access due to concurrent update', '40001'),
      serverError('canceling statement due to user request', '57014'),
      serverError('canceling statement due to lock timeout', '55P03'),
      serverError('cached plan must not change result type', '0A000'),
      serverError('terminating connection due to administrator command', '57P01'),
      serverError('terminating connection due to idle-in-transaction timeout', '25P03'),
      serverError('terminating connection due to idle-session timeout', '57P05'),
      serverError('cannot execute INSERT in a read-only transaction', '25006'),
      Object.assign(serverError('database "kukopay" is not currently accepting connections', '55000'), {
        routine: 'CheckMyDatabase',
      }),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
    ];
    const lasting = [
      serverError('duplicate key value violates unique constraint "events_pkey"', '23505'),
      serverError('syntax error at or near "SELEC"', '42601'),
      serverError('value too long for type character varying(8)', '22001'),
      Object.assign(serverError('cannot refresh materialized view concurrently', '55000'), {
        routine: 'ExecRefreshMatView',
      }),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
    ];
    for (const error of [...passing, ...lasting]) {
      expect([error.message, isWorthTryingAgain(error)]).toEqual([
        error.message,
        toErrorResponse(error, 'req_6').status === 503,
      ]);
    }
    expect(passing.every(isWorthTryingAgain)).toBe(true);
    expect(lasting.some(isWorthTryingAgain)).toBe(false);
  });

  it('say why for a session ended for idling, a read-only database, one closed to connections', () => {
    expect(
      unavailableReason(serverError('terminating connection due to idle-in-transaction timeout', '25P03')),
    ).toMatch(/idle_in_transaction_session_timeout/);
    expect(unavailableReason(serverError('terminating connection due to idle-session timeout', '57P05'))).toMatch(
      /idle_session_timeout/,
    );
    expect(unavailableReason(serverError('cannot execute UPDATE in a read-only transaction', '25006'))).toMatch(
      /^is read-only/,
    );
    const closed = Object.assign(serverError('database "k" is not currently accepting connections', '55000'), {
      routine: 'CheckMyDatabase',
    });
    expect(unavailableReason(closed)).toMatch(/ALLOW_CONNECTIONS false/);
    expect(toErrorResponse(closed, 'req_7').status).toBe(503);
  });

  it("read the reason through TypeORM's wrapper and name nothing of the connection", () => {
    const wrapped = Object.assign(new Error('query failed'), { driverError: serverError('', 'ECONNREFUSED') });
    expect(unavailableReason(wrapped)).toMatch(/^refused the connection/);
    // pg's words for a connection lost mid-statement carry no code.
    const lost = new Error('Connection terminated unexpectedly (kuko@10.0.0.7:5432)');
    expect(unavailableReason(lost)).toBe('failed the check: the connection was lost or refused');
  });
});
