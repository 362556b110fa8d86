/** How much of a merchant's answer an attempt keeps: its first 1 KiB (docs/notifications.md). */
export const KEEP_LIMIT = 1024;

/**
 * The start of an answer, as the text an attempt records: at most KEEP_LIMIT bytes of
 * UTF-8. A cut inside a character leaves that character out. NUL, which PostgreSQL text
 * cannot hold, is dropped, so that no answer can make its own attempt unrecordable (and so
 * sent again and again). Other invalid bytes read as U+FFFD, three bytes each, so text
 * read from invalid bytes is cut again to the limit.
 */
export function keptAnswer(bytes: Buffer): string {
  const text = bytes.subarray(0, characterEnd(bytes, KEEP_LIMIT)).toString('utf8').replaceAll('\u0000', '');
  const encoded = Buffer.from(text, 'utf8');
  return encoded.length <= KEEP_LIMIT ? text : encoded.subarray(0, characterEnd(encoded, KEEP_LIMIT)).toString('utf8');
}

/** Where to cut `bytes` at most `limit` bytes in without splitting a UTF-8 character. */
function characterEnd(bytes: Buffer, limit: number): number {
  let end = Math.min(limit, bytes.length);
  // The first byte left out continues a character: leave out the part of it before.
  if (end < bytes.length) while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return end;
}
