import { urlSettings } from './url-settings';

const url = (options: string) => `postgres://u@db/k?options=${encodeURIComponent(options)}`;

describe('urlSettings', () => {
  it('reads -c name=value in each of the forms libpq passes on', () => {
    expect(urlSettings(url('-c search_path=app -clock_timeout=2s --statement-timeout=9s'))).toEqual({
      search_path: 'app',
      lock_timeout: '2s',
      statement_timeout: '9s',
    });
  });

  it('keeps an escaped space inside a value, and the last of two values', () => {
    expect(urlSettings(url('-c search_path=a,\\ b -c search_path=c'))).toEqual({ search_path: 'c' });
    expect(urlSettings(url('-c application_name=my\\ app'))).toEqual({ application_name: 'my app' });
  });

  it('splits on ASCII whitespace only, and drops a trailing backslash as PostgreSQL does', () => {
    expect(urlSettings(url('-c application_name=a\u00a0b -c search_path=x\\'))).toEqual({
      application_name: 'a\u00a0b',
      search_path: 'x',
    });
  });

  it('refuses settings fixed when a transaction starts, which no statement inside it can set', () => {
    expect(() => urlSettings(url('-c default_transaction_isolation=serializable'))).toThrow(/ALTER ROLE/);
    expect(() => urlSettings(url('-c transaction_read_only=on'))).toThrow(/cannot be applied per transaction/);
  });

  it('is empty without options', () => {
    expect(urlSettings('postgres://u@db/k?sslmode=disable')).toEqual({});
  });

  it('refuses what is not a setting', () => {
    expect(() => urlSettings(url('--single'))).toThrow(/"--single" is not a setting; write each as -c name=value/);
    expect(() => urlSettings(url('-c'))).toThrow(/not a setting/);
    expect(() => urlSettings(url('-c =1'))).toThrow(/not a setting/);
    expect(() => urlSettings(url('-c a;b=1'))).toThrow(/"a;b" is not a setting name/);
  });
});
