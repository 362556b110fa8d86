/**
 * Every value of one request header, from the raw header lines: Node joins most repeated
 * headers into one value with ", " (and keeps only the first of some), so a header sent
 * twice could otherwise pass for one. `name` in lower case.
 */
export function headerLines(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const field = rawHeaders[i]!;
    if (field.length === name.length && field.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  }
  return values;
}
