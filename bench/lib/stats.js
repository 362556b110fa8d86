'use strict';
// Figures of one measured run, computed the same way for HTTP and for SQL runs:
// throughput over the run's real duration, nearest-rank percentiles of the successful
// answers' latencies (float milliseconds, not autocannon's whole-millisecond histogram).

function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summarize({ completed, seconds, latencies, non2xx = 0, errors = 0, timeouts = 0, tally, statuses = {} }) {
  const sorted = Float64Array.from(latencies).sort();
  const round = (value, digits) => (value === null ? null : Number(value.toFixed(digits)));
  return {
    completed,
    seconds: round(seconds, 2),
    rps: round(completed / seconds, 1),
    p50: round(percentile(sorted, 0.5), 2),
    p99: round(percentile(sorted, 0.99), 2),
    max: round(sorted.length ? sorted[sorted.length - 1] : null, 2),
    non2xx,
    errors,
    timeouts,
    unexpected: tally.unexpected,
    statuses,
    notes: tally.notes,
    problems: tally.samples,
  };
}

/** Answers that are not what the scenario expects (status, header, outcome), with a few samples. */
class Tally {
  constructor() {
    this.unexpected = 0;
    this.notes = {};
    this.samples = [];
  }

  note(name, by = 1) {
    this.notes[name] = (this.notes[name] ?? 0) + by;
  }

  /** Counts `count` wrong answers and keeps the first few descriptions for the report. */
  bad(description, count = 1) {
    this.unexpected += count;
    if (this.samples.length < 3) this.samples.push(String(description).slice(0, 300));
  }
}

module.exports = { summarize, percentile, Tally };
