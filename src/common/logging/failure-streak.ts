/**
 * What to log about a loop that keeps failing while something it needs is away (the
 * database during an outage): one line when it starts failing, one every `everyMs` after
 * that with the count so far, one when it recovers. A loop that runs every 100 ms would
 * otherwise write ten lines a second for as long as the outage lasts.
 *
 * A thing that flaps (away a second, back a second) would still write two lines a flap:
 * an outage that starts within `everyMs` of the last line is kept quiet, and counted in
 * the next line that is written, or in one of its own once `everyMs` has passed.
 */
export class FailureStreak {
  /** Failures of the outage going on now (0: none is). */
  private failures = 0;
  /** Whether the outage going on now was said, so that its end is said too. */
  private told = false;
  /** Outages kept quiet since the last line, and their failures. */
  private quietOutages = 0;
  private quietFailures = 0;
  private loggedAt = -Infinity;

  constructor(
    /** What fails, as the lines name it: "notification relay". */
    private readonly subject: string,
    private readonly everyMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The line to log for this failure, or null when one was logged less than `everyMs` ago. */
  failed(reason: string): string | null {
    this.failures += 1;
    if (this.now() - this.loggedAt < this.everyMs) return null;
    const sofar = this.failures > 1 ? ` (${this.failures} attempts failed so far)` : '';
    this.told = true;
    const quiet = this.quietOnes();
    return this.said(`${this.subject} failed: ${reason}${sofar}${quiet ? `; before it, ${quiet}` : ''}`);
  }

  /** The line to log when an outage ends, or null when there was none or it was kept quiet. */
  succeeded(): string | null {
    const failures = this.failures;
    this.failures = 0;
    if (failures > 0 && this.told) {
      this.told = false;
      const quiet = this.quietOnes();
      return this.said(`${this.subject} recovered after ${attempts(failures)}${quiet ? `; ${quiet}` : ''}`);
    }
    if (failures > 0) {
      this.quietOutages += 1;
      this.quietFailures += failures;
    }
    // Said at the first success an interval after the last line, so that quiet outages are
    // not left unsaid until the next failure, which may come days later.
    if (this.quietOutages === 0 || this.now() - this.loggedAt < this.everyMs) return null;
    return this.said(`${this.subject} recovered; ${this.quietOnes()} since the last line`);
  }

  /** The outages kept quiet since the last line, for the line now written: "3 failed attempts in 2 short outages". */
  private quietOnes(): string {
    if (this.quietOutages === 0) return '';
    const outages = this.quietOutages === 1 ? 'a short outage' : `${this.quietOutages} short outages`;
    const text = `${attempts(this.quietFailures)} in ${outages}`;
    this.quietOutages = 0;
    this.quietFailures = 0;
    return text;
  }

  private said(line: string): string {
    this.loggedAt = this.now();
    return line;
  }
}

/** "1 failed attempt", "3 failed attempts". */
function attempts(count: number): string {
  return `${count} failed attempt${count === 1 ? '' : 's'}`;
}
