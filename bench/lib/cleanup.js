'use strict';
// What the bench started, stopped in reverse order: on success, on failure and on
// SIGINT/SIGTERM. Each step is bounded in time, and one failing step does not keep the
// others from running.

class Cleanup {
  constructor(log) {
    this.log = log;
    this.steps = [];
    this.running = null;
  }

  /** Registers how to undo something that has just been started. */
  push(label, undo) {
    this.steps.push({ label, undo });
  }

  /** Runs every step once (later calls wait for the first). */
  run() {
    this.running ??= (async () => {
      for (let step = this.steps.pop(); step; step = this.steps.pop()) {
        try {
          await withTimeout(step.undo(), 30_000, `stopping ${step.label}`);
        } catch (error) {
          this.log(`cleanup: ${step.label}: ${error.message}`);
        }
      }
    })();
    return this.running;
  }
}

/** Rejects when `promise` has not settled within `ms`. */
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

module.exports = { Cleanup, withTimeout, sleep };
