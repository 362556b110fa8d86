import { parseJsonText, withoutWrittenNumbers, WrittenNumber } from './json-text';
import { canonicalJson } from '../../idempotency/canonical-json';

describe('parseJsonText', () => {
  it('keeps each number written with a fraction or an exponent as written, and integers as numbers', () => {
    const parsed = parseJsonText('{"a":2990.0,"b":[1e3,-1.5],"c":7,"d":"2.5e3","e":{"f":1.9999999999999999}}');
    expect(parsed).toEqual({
      a: new WrittenNumber('2990.0'),
      b: [new WrittenNumber('1e3'), new WrittenNumber('-1.5')],
      c: 7,
      d: '2.5e3',
      e: { f: new WrittenNumber('1.9999999999999999') },
    });
    expect(parseJsonText('1.5')).toBe(1.5);
  });

  it('cannot be fooled into making one: an object that looks like the marker stays an object', () => {
    const forged = parseJsonText('{"metadata":{"fraction":"1.5"},"m":{"kuko-number-00":"1.5"},"x":1.5}');
    expect(forged).toEqual({
      metadata: { fraction: '1.5' },
      m: { 'kuko-number-00': '1.5' },
      x: new WrittenNumber('1.5'),
    });
  });

  it('gives two bodies that differ only in how a number is written two fingerprints', () => {
    const texts = [
      '{"metadata":1.5}',
      '{"metadata":{"fraction":"1.5"}}',
      '{"metadata":{"written":"1.5"}}',
      '{"metadata":null}',
      '{"amount":5.0}',
      '{"amount":5}',
    ];
    const canonical = texts.map((text) => canonicalJson(parseJsonText(text)));
    expect(new Set(canonical).size).toBe(texts.length);
  });

  it('says a prototype-poisoning key is refused as such, not that the JSON is invalid', () => {
    for (const text of ['{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}']) {
      expect(() => parseJsonText(text)).toThrow('refused as prototype poisoning');
    }
    expect(() => parseJsonText('{"a":')).toThrow(SyntaxError);
  });

  it('refuses a body nested too deep before walking it again', () => {
    const deep = `${'['.repeat(5000)}1.5${']'.repeat(5000)}`;
    expect(() => parseJsonText(`{"a":${deep}}`)).toThrow('JSON may be nested at most 32 levels deep.');
  });
});

describe('withoutWrittenNumbers', () => {
  it('replaces each by NaN in a copy, and answers null for a body that has none', () => {
    const parsed = parseJsonText('{"amount":2990.0,"metadata":{"rate":1.5},"subject":"s"}');
    expect(withoutWrittenNumbers(parsed)).toEqual({ amount: NaN, metadata: { rate: NaN }, subject: 's' });
    expect(parsed).toEqual({
      amount: new WrittenNumber('2990.0'),
      metadata: { rate: new WrittenNumber('1.5') },
      subject: 's',
    });
    expect(withoutWrittenNumbers(parseJsonText('{"amount":2990}'))).toBeNull();
    expect(withoutWrittenNumbers({ amount: 1 })).toBeNull();
  });

  it('stores one as the number it denotes', () => {
    expect(JSON.stringify(parseJsonText('{"fee":0.3}'))).toBe('{"fee":0.3}');
  });
});
