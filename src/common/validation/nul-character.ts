/** PostgreSQL text cannot hold U+0000, so it is refused up front rather than failing a write. */
export function pathOfNulCharacter(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const itemPath = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return itemPath;
    const found = pathOfNulCharacter(item, itemPath);
    if (found !== null) return found;
  }
  return null;
}
