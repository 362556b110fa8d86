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
    return this.said(`${this.subject} failed: ${reason}${sofar}${this.quietOnes()}`);
  }

  /** The line to log when an outage ends, or null when there was none or it was kept quiet. */
  succeeded(): string | null {
    if (this.failures === 0) return null;
    const failures = this.failures;
    this.failures = 0;
    if (this.told) {
      this.told = false;
      return this.said(`${this.subject} recovered after ${failures} failed attempts${this.quietOnes()}`);
    }
    this.quietOutages += 1;
    this.quietFailures += failures;
    if (this.now() - this.loggedAt < this.everyMs) return null;
    const outages = this.quietOutages === 1 ? 'a short outage' : `${this.quietOutages} short outages`;
    const line = `${this.subject} recovered; ${this.quietFailures} attempts failed in ${outages} since the last line`;
    this.quietOutages = 0;
    this.quietFailures = 0;
    return this.said(line);
  }

  /** The outages kept quiet since the last line, for the line now written. */
  private quietOnes(): string {
    if (this.quietOutages === 0) return '';
    const text = `; before it, ${this.quietFailures} attempts failed in ${this.quietOutages} short outages`;
    this.quietOutages = 0;
    this.quietFailures = 0;
    return text;
  }

  private said(line: string): string {
    this.loggedAt = this.now();
    return line;
  }
}
