/** bigint minor units (as pg returns them, a string) to a JSON number; the schema bounds amounts far below 2^53. */
export function money(value: string): number {
  const amount = Number(value);
  if (!Number.isSafeInteger(amount)) throw new Error(`amount ${value} is out of the safe integer range`);
  return amount;
}
