import { describeDatabaseUrl } from './describe-url';

describe('describeDatabaseUrl', () => {
  it('names user, host, port and database, never the password or other parameters', () => {
    expect(describeDatabaseUrl('postgres://app:s3cr%3At@db.internal:6432/kukopay?sslmode=require&password=x')).toBe(
      'app@db.internal:6432/kukopay',
    );
  });

  it('takes a socket directory and user given as parameters', () => {
    expect(describeDatabaseUrl('postgres:///kukopay?host=/var/run/postgresql&user=postgres')).toBe(
      'postgres@/var/run/postgresql/kukopay',
    );
  });

  it('says so for a URL it cannot read', () => {
    expect(describeDatabaseUrl('not a url')).toBe('an unparsable URL');
  });
});
