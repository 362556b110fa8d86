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
});
