import { KEEP_LIMIT, keptAnswer } from './kept-answer';

describe('keptAnswer', () => {
  it('keeps the first 1 KiB', () => {
    expect(keptAnswer(Buffer.from('x'.repeat(5000)))).toBe('x'.repeat(KEEP_LIMIT));
    expect(keptAnswer(Buffer.from('short'))).toBe('short');
  });

  it('never cuts a character in two', () => {
    // "boom " is 5 bytes, each é 2: byte 1024 is the second half of an é.
    const kept = keptAnswer(Buffer.from(`boom ${'é'.repeat(1000)}`));
    expect(kept).toBe(`boom ${'é'.repeat(509)}`);
    expect(Buffer.byteLength(kept)).toBe(1023);
    const emoji = keptAnswer(Buffer.from(`${'a'.repeat(1022)}😀tail`));
    expect(emoji).toBe('a'.repeat(1022));
    const fits = keptAnswer(Buffer.from(`${'a'.repeat(1020)}😀tail`));
    expect(fits).toBe(`${'a'.repeat(1020)}😀`);
  });

  it('drops NUL and reads invalid bytes as U+FFFD', () => {
    expect(keptAnswer(Buffer.from([0x6f, 0x6b, 0x00, 0xff]))).toBe('ok\ufffd');
  });

  it('keeps at most 1 KiB of UTF-8 even where invalid bytes read as the three bytes of U+FFFD', () => {
    const invalid = keptAnswer(Buffer.alloc(KEEP_LIMIT, 0xff));
    expect(invalid).toBe('\ufffd'.repeat(341));
    expect(Buffer.byteLength(invalid)).toBeLessThanOrEqual(KEEP_LIMIT);
    const mixed = keptAnswer(
      Buffer.concat([Buffer.from('a\u0000b'), Buffer.from([0xff]), Buffer.from('é'.repeat(600))]),
    );
    expect(Buffer.byteLength(mixed)).toBeLessThanOrEqual(KEEP_LIMIT);
    expect(mixed.startsWith('ab\ufffdé')).toBe(true);
  });
});
