import { unreadUrlParameters } from './unread-url-parameters';

describe('the parameters of a database URL that the pg driver does not read', () => {
  it('are each said once, and the ones it reads are not', () => {
    expect(
      unreadUrlParameters(
        'DATABASE_URL',
        'postgres://u@db/k?sslmod=require&sslmode=disable&connect_timeout=5&application_name=x&options=-c%20a%3D1',
      ),
    ).toEqual([
      'DATABASE_URL names the parameter sslmod, which the pg driver does not read: it changes nothing (docs/operations.md, "TLS")',
      'DATABASE_URL names the parameter connect_timeout, which the pg driver does not read: it changes nothing (docs/operations.md, "TLS")',
    ]);
    expect(
      unreadUrlParameters('DATABASE_DIRECT_URL', 'postgres://u@db/k?sslmode=verify-full&sslrootcert=/ca.pem'),
    ).toEqual([]);
  });
});
