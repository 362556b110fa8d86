/**
 * A fix for graphile-worker's local queue (0.17.3; 0.18.0 and its main branch have the
 * same code), applied once when this module is loaded.
 *
 * Releasing a local queue that holds fetched jobs no worker has taken yet (mode WAITING)
 * hands those jobs back to the database. `setModeReleased()` first sets the mode to
 * RELEASED, then starts the hand-back and passes its promise to `background()`, which
 * refuses any promise once the queue is RELEASED with nothing in the background, so it
 * throws. Two things follow:
 * - every graceful stop in that state fails ("Releasing local queue failed: Cannot
 *   background something when the queue is already released") and turns forceful;
 * - the hand-back runs on with nobody holding its promise, and when the database is away
 *   (the pool is being replaced after a restart) it rejects unhandled, which ends a Node
 *   process ("Error occurred whilst returning jobs from local queue to database queue").
 *
 * The fix lets `background()` take that one promise while `setModeReleased()` runs, as the
 * library's own comment there intends ("this will add to backgroundCount"): the release
 * then waits for the hand-back, and a failed hand-back rejects the release, which the
 * pool's shutdown logs (that stop, with the database away, still ends forcefully). The
 * jobs stay locked under the pool's id, and the lease unlocks them (docs/notifications.md,
 * "Engine").
 */
import { LocalQueue } from 'graphile-worker/dist/localQueue';

/** The private members the fix reaches; checked below so a changed library fails loudly. */
interface LocalQueueInternals {
  mode: string;
  backgroundCount: number;
  background(promise: Promise<void>): void;
  setModeReleased(): void;
  decreaseBackgroundCount: () => void;
  decreaseBackgroundCountWithError: (error: unknown) => void;
}

const releasing = new WeakSet<object>();

function applyFix(): void {
  const prototype = LocalQueue.prototype as unknown as LocalQueueInternals;
  if (typeof prototype.background !== 'function' || typeof prototype.setModeReleased !== 'function') {
    throw new Error("graphile-worker's LocalQueue changed: review src/notifications/local-queue-release.ts");
  }
  const background = prototype.background;
  const setModeReleased = prototype.setModeReleased;
  prototype.setModeReleased = function (this: LocalQueueInternals) {
    releasing.add(this);
    try {
      setModeReleased.call(this);
    } finally {
      releasing.delete(this);
    }
  };
  prototype.background = function (this: LocalQueueInternals, promise: Promise<void>) {
    // The two counters are per-instance fields, so they are checked here, not at load: if
    // a version lacks them, the library's own behaviour is left as it is.
    if (
      releasing.has(this) &&
      this.mode === 'RELEASED' &&
      this.backgroundCount === 0 &&
      typeof this.decreaseBackgroundCount === 'function' &&
      typeof this.decreaseBackgroundCountWithError === 'function'
    ) {
      this.backgroundCount++;
      promise.then(this.decreaseBackgroundCount, this.decreaseBackgroundCountWithError);
      return;
    }
    background.call(this, promise);
  };
}

applyFix();
