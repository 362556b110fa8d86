import { clientStatementTimeoutMs } from './data-source-options';

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
