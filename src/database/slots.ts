/**
 * A counting semaphore with a wait limit. Per process, for load shaping only: it decides
 * how many connections may sit in transactions at once, never whether anything happens.
 */
export class Slots {
  private free: number;
  private readonly waiting: { grant: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves when a slot is this caller's; rejects with `onTimeout()` after `timeoutMs`. */
  acquire(timeoutMs: number, onTimeout: () => Error): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          clearTimeout(entry.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(onTimeout());
        }, timeoutMs),
      };
      this.waiting.push(entry);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.free += 1;
  }
}
