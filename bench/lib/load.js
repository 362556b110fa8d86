'use strict';
// One autocannon run against the server. A scenario gives the request (with its own
// setupRequest/onResponse) and the status it expects; the run reports the figures plus
// every answer that was not that status.
const autocannon = require('autocannon');
const { summarize } = require('./stats');

/**
 * `until`: a promise that ends the run early when it settles (e.g. a purge finishing).
 * `amount`: exactly this many requests instead of `seconds` of them.
 */
async function runHttp({ url, connections, seconds, amount, request, expectStatus, tally, until }) {
  const latencies = [];
  let completed = 0;
  const instance = autocannon({
    url,
    connections,
    ...(amount === undefined ? { duration: seconds } : { amount }),
    timeout: 10,
    requests: [request],
  });
  until?.finally(() => instance.stop());
  instance.on('response', (client, status, bytes, ms) => {
    completed++;
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await instance;
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  for (const [code, count] of Object.entries(statuses)) {
    if (Number(code) !== expectStatus)
      tally.bad(`${count} answers with status ${code} (expected ${expectStatus})`, count);
  }
  return summarize({
    completed,
    seconds: result.duration,
    latencies,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    tally,
    statuses,
  });
}

/** Case-insensitive header lookup in autocannon's onResponse headers object. */
function header(headers, name) {
  const key = Object.keys(headers ?? {}).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

module.exports = { runHttp, header };
