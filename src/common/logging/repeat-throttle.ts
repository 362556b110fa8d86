/**
 * Lets a line that keeps repeating through (graphile-worker's "Error occurred fetching
 * jobs", once a second per instance while the database is away) at most once per
 * `everyMs`, saying how many like it were held back. Lines that differ only in their
 * numbers (a delay, a port) are alike.
 */
export class RepeatThrottle {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly everyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The line to log, or null when one like it was logged less than `everyMs` ago. */
  line(message: string): string | null {
    const key = message.replace(/\d+/g, '#');
    const now = this.now();
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.everyMs) {
      seen.held += 1;
      return null;
    }
    // Lines from a past outage are forgotten, so the map stays small.
    for (const [other, entry] of this.last) if (now - entry.at >= 10 * this.everyMs) this.last.delete(other);
    this.last.set(key, { at: now, held: 0 });
    if (!seen || seen.held === 0) return message;
    return `${message} (and ${seen.held} like it in the ${Math.round((now - seen.at) / 1000)} s before)`;
  }
}
