import { escapeLiteral } from 'pg';
import { literal, quoted } from './literal';

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

  it("quotes every string exactly as pg's escapeLiteral does", () => {
    const samples = ['', 'plain', "'", '\\', "a'b\\c''d", '{"body":"it\'s \\u00e9"}', '\u00e9\u{1f600}', "$1 '$2'"];
    const alphabet = ["'", '\\', 'a', ' ', 'é', '\n', '"', '$'];
    for (let i = 0; i < 200; i++) {
      const length = i % 17;
      samples.push(Array.from({ length }, (_, j) => alphabet[(i * 7 + j * 3) % alphabet.length]).join(''));
    }
    for (const sample of samples) expect(quoted(sample)).toBe(escapeLiteral(sample));
  });
});
