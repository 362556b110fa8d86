/**
 * What to log about a loop that keeps failing while something it needs is away (the
 * database during an outage): one line when it starts failing, one every `everyMs` after
 * that with the count so far, one when it recovers. A loop that runs every 100 ms would
 * otherwise write ten lines a second for as long as the outage lasts.
 */
export class FailureStreak {
  private failures = 0;
  private loggedAt = 0;

  constructor(
    /** What fails, as the lines name it: "notification relay". */
    private readonly subject: string,
    private readonly everyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The line to log for this failure, or null when one was logged less than `everyMs` ago. */
  failed(reason: string): string | null {
    this.failures += 1;
    if (this.failures > 1 && this.now() - this.loggedAt < this.everyMs) return null;
    this.loggedAt = this.now();
    const sofar = this.failures > 1 ? ` (${this.failures} attempts failed so far)` : '';
    return `${this.subject} failed: ${reason}${sofar}`;
  }

  /** The line to log when a failure streak ends, or null when there was none. */
  succeeded(): string | null {
    if (this.failures === 0) return null;
    const line = `${this.subject} recovered after ${this.failures} failed attempts`;
    this.failures = 0;
    return line;
  }
}
