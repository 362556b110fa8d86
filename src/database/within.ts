/**
 * The promise's value, or `fallback` if it has not settled within `ms`. The promise runs
 * on; only the wait for it ends. For checks that must answer in time whatever the
 * database does (readiness, the metrics scrape).
 */
export async function within<T>(promise: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback()), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
