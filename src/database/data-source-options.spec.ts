import { createServer, type AddressInfo } from 'node:net';
import { Pool, type PoolConfig } from 'pg';
import { clientStatementTimeoutMs, dataSourceOptions, withServerSettings } from './data-source-options';

const withOptions = (options: string) => `postgres://u@db:5432/k?options=${encodeURIComponent(options)}`;

describe("the client's own limit on a statement's answer", () => {
  it('is statement_timeout (60 s) and 5 s more, so that PostgreSQL always acts first on a statement it runs', () => {
    expect(clientStatementTimeoutMs('postgres://u@db:5432/k')).toBe(65_000);
  });

  it.each([
    ['-c statement_timeout=1s', 6_000],
    ['-c search_path=app -c statement_timeout=2min', 125_000],
    ['--statement-timeout=1500', 6_500],
    ['-c statement_timeout=250ms', 5_250],
    ['-c statement_timeout=1h', 3_605_000],
  ])('follows a statement_timeout the URL sets (%s)', (options, expected) => {
    expect(clientStatementTimeoutMs(withOptions(options))).toBe(expected);
  });

  it('is off when the URL turns statement_timeout off, and the default when it cannot read it', () => {
    expect(clientStatementTimeoutMs(withOptions('-c statement_timeout=0'))).toBeUndefined();
    expect(clientStatementTimeoutMs(withOptions('-c statement_timeout=soon'))).toBe(65_000);
    expect(clientStatementTimeoutMs(withOptions('not a setting'))).toBe(65_000);
  });
});

describe('a connection the server ends as soon as it is ready', () => {
  // pg_terminate_backend or idle_session_timeout at the moment a connection opens: its
  // readiness and its FATAL arrive in one packet, before TypeORM listens on it.
  it('fails what runs on it, and does not end the process', async () => {
    const message = (type: string, body: Buffer) => {
      const length = Buffer.alloc(4);
      length.writeInt32BE(body.length + 4);
      return Buffer.concat([Buffer.from(type), length, body]);
    };
    const field = (code: string, text: string) => Buffer.from(`${code}${text}\0`);
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () =>
        socket.end(
          Buffer.concat([
            message('R', Buffer.from([0, 0, 0, 0])), // AuthenticationOk
            message('Z', Buffer.from('I')), // ReadyForQuery
            message(
              'E',
              Buffer.concat([
                field('S', 'FATAL'),
                field('C', '57P01'),
                field('M', 'terminating connection due to administrator command'),
                Buffer.from([0]),
              ]),
            ),
          ]),
        ),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const options = dataSourceOptions(`postgres://u@127.0.0.1:${port}/k`) as { extra: PoolConfig };
    const pool = new Pool({ connectionString: `postgres://u@127.0.0.1:${port}/k`, ...options.extra });
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      // The process would have ended before this line, on an 'error' event with no listener.
      await expect(client.query('SELECT 1')).rejects.toThrow();
      client.release(true);
    } finally {
      await pool.end();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the URL handed to pg', () => {
  it('names verify-full for require and verify-ca, which pg reads as verify-full, and leaves the others', () => {
    const mode = (sslmode: string) =>
      new URL(withServerSettings(`postgres://u@db/k?sslmode=${sslmode}`, 'session').connectionString).searchParams.get(
        'sslmode',
      );
    expect(['require', 'verify-ca', 'verify-full', 'disable', 'no-verify'].map(mode)).toEqual([
      'verify-full',
      'verify-full',
      'verify-full',
      'disable',
      'no-verify',
    ]);
    // With uselibpqcompat=true pg reads them as libpq does (require: TLS without checks).
    const compat = withServerSettings('postgres://u@db/k?sslmode=require&uselibpqcompat=true', 'session');
    expect(new URL(compat.connectionString).searchParams.get('sslmode')).toBe('require');
  });
});
