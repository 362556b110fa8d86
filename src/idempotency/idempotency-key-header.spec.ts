import { DomainError } from '../common/errors/domain-error';
import { IDEMPOTENCY_KEY_DOC, parseIdempotencyKey } from './idempotency-key-header';

const parse = (...pairs: string[]) => parseIdempotencyKey(pairs);
const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as DomainError).code;
  }
  return 'accepted';
};

describe('parseIdempotencyKey', () => {
  it('is null without the header', () => {
    expect(parse('Content-Type', 'application/json')).toBeNull();
  });

  it('takes the header in any case', () => {
    expect(parse('idempotency-key', 'abc')).toBe('abc');
    expect(parse('IDEMPOTENCY-KEY', 'abc')).toBe('abc');
  });

  it('accepts 1 to 255 printable ASCII characters, spaces included', () => {
    expect(parse('Idempotency-Key', 'x')).toBe('x');
    expect(parse('Idempotency-Key', 'a b~!')).toBe('a b~!');
    expect(parse('Idempotency-Key', 'k'.repeat(255))).toBe('k'.repeat(255));
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['a control character', 'ab\tc'],
    ['non-ASCII', 'clé'],
    ['an empty quoted string', '""'],
  ])('refuses %s', (_, value) => {
    expect(refused(() => parse('Idempotency-Key', value))).toBe('idempotency_key_invalid');
  });

  it('refuses the header sent twice', () => {
    expect(refused(() => parse('Idempotency-Key', 'a', 'idempotency-key', 'a'))).toBe('idempotency_key_invalid');
  });

  it('reads the quoted IETF form as the bare value', () => {
    expect(parse('Idempotency-Key', '"8f14e45f-ceea-4672-9e6b-5a1f5b5c0a11"')).toBe(
      '8f14e45f-ceea-4672-9e6b-5a1f5b5c0a11',
    );
    expect(parse('Idempotency-Key', '"a\\"b\\\\c"')).toBe('a"b\\c');
  });

  it("has a document schema that takes exactly the values it takes, the quoted form's included", () => {
    const { pattern, minLength, maxLength } = IDEMPOTENCY_KEY_DOC.schema;
    const documented = (value: string) =>
      value.length >= minLength && value.length <= maxLength && new RegExp(pattern).test(value);
    const samples = [
      'x',
      'k'.repeat(255),
      'k'.repeat(256),
      `"${'k'.repeat(255)}"`,
      `"${'k'.repeat(256)}"`,
      `"${'\\"'.repeat(255)}"`,
      `"${'\\"'.repeat(256)}"`,
      '""',
      '"',
      '"a"b"',
      '"unclosed',
      'clé',
      'tab\there',
      'a b',
      ' leading',
      'trailing ',
      ' ',
      '"  quoted spaces  "',
    ];
    for (const value of samples) {
      expect({ value, documented: documented(value) }).toEqual({
        value,
        documented: refused(() => parse('Idempotency-Key', value)) === 'accepted',
      });
    }
  });
});
