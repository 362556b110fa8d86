/** How much of a merchant's answer an attempt keeps: its first 1 KiB (docs/notifications.md). */
export const KEEP_LIMIT = 1024;

/**
 * The first KEEP_LIMIT bytes of an answer, as the text an attempt records. A cut inside
 * a UTF-8 character leaves that character out, rather than keeping a U+FFFD that would
 * make the text longer than the bytes it stands for. NUL, which PostgreSQL text cannot
 * hold, is dropped, so that no answer can make its own attempt unrecordable (and so sent
 * again and again). Other invalid bytes read as U+FFFD.
 */
export function keptAnswer(bytes: Buffer): string {
  let end = Math.min(KEEP_LIMIT, bytes.length);
  // The first byte left out continues a character: leave out the part of it before.
  if (end < bytes.length) while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8').replaceAll('\u0000', '');
}
