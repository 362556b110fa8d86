import { literal } from './literal';

describe('literal', () => {
  it('quotes strings, doubling quotes and escaping backslashes', () => {
    expect(literal("it's")).toBe("'it''s'");
    expect(literal('a\\b')).toBe(" E'a\\\\b'");
  });

  it('writes integers, and refuses anything else', () => {
    expect(literal(201)).toBe('201');
    expect(() => literal(1.5)).toThrow();
    expect(() => literal(Number.NaN)).toThrow();
  });

  it('writes bytes as a decode() of hex', () => {
    expect(literal(Buffer.from([0, 255]))).toBe("decode('00ff', 'hex')");
  });
});
