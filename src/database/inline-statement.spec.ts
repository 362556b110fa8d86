import { inlineStatement, inlineValue } from './inline-statement';
import { invocation } from './db';

describe('inlineStatement', () => {
  it('writes each value as an untyped literal in place of its parameter', () => {
    expect(
      inlineStatement('SELECT * FROM t WHERE a = $1 AND b = $2::int LIMIT $10', ["it's", 5, 0, 0, 0, 0, 0, 0, 0, 11]),
    ).toBe("SELECT * FROM t WHERE a = 'it''s' AND b = '5'::int LIMIT '11'");
  });

  it('leaves $n inside quoted strings alone', () => {
    expect(inlineStatement("SELECT '$1 costs', $1, 'it''s $2'", ['x'])).toBe("SELECT '$1 costs', 'x', 'it''s $2'");
  });

  it('leaves $n alone wherever PostgreSQL does not read a parameter', () => {
    const steppedOver = [
      "E'\\' $1'",
      "e'it\\'s $1'",
      '"col $1"',
      '"a "" $1"',
      '$$ $1 $$',
      '$body$ $1 $$ $1 $body$',
      '-- $1 costs\n',
      '/* $1 */',
      'a$1',
      'a$1$2',
    ];
    for (const text of steppedOver) {
      expect(inlineStatement(`SELECT ${text}, $1`, ['x'])).toBe(`SELECT ${text}, 'x'`);
    }
    expect(inlineStatement("SELECT E'a', $1, $x$ $2 $x$, $2", ['x', 5])).toBe("SELECT E'a', 'x', $x$ $2 $x$, '5'");
  });

  it('refuses a parameter without its value', () => {
    expect(() => inlineStatement('SELECT $2', ['x'])).toThrow(/\$2 but has 1 values/);
    expect(() => inlineStatement('SELECT $0', ['x'])).toThrow(/\$0 but has 1 values/);
  });

  it('converts values as pg converts parameters', () => {
    expect(inlineValue(null)).toBe('NULL');
    expect(inlineValue(undefined)).toBe('NULL');
    expect(inlineValue(true)).toBe("'true'");
    expect(inlineValue(12n)).toBe("'12'");
    expect(inlineValue(Buffer.from([0, 255]))).toBe(" E'\\\\x00ff'");
    expect(inlineValue(new Date('2026-01-02T03:04:05.678Z'))).toBe("'2026-01-02T03:04:05.678Z'");
    expect(inlineValue({ a: "b'" })).toBe(`'{"a":"b''"}'`);
    // The array literal's own backslash, then escaped once more for the SQL string.
    expect(inlineValue(['a', 'b"c', null])).toBe(` E'{"a","b\\\\"c",NULL}'`);
    expect(() => inlineValue(Symbol('x'))).toThrow(/symbol/);
  });
});

describe("invocation, Db's batched statements", () => {
  const statement = { name: 'kuko_x', types: ['text', 'int'], text: "SELECT $1, $2, '$1 stays'" };

  it('casts each literal to its declared type behind a pooler, through the same scan', () => {
    expect(invocation(statement, ["a'b", 3], 'transaction')).toBe("SELECT 'a''b'::text, 3::int, '$1 stays'");
  });

  it('EXECUTEs the prepared plan in session mode', () => {
    expect(invocation(statement, ["a'b", 3], 'session')).toBe("EXECUTE kuko_x('a''b', 3)");
  });
});
