/**
 * The chaos workers' refund operation through @kukopay/node (`--client sdk`): no retry
 * loop here, the client's own does it (one key minted per call, the same body bytes on
 * every attempt, backoff with jitter). The key is read back from the answer, or from the
 * error, so the harness can check that each refund is stored under its operation's key.
 */
const { KukoPay } = require('@kukopay/node');

/**
 * More retries than the default 3: the harness keeps the server down for a good part of
 * the run, and a merchant facing such an outage would raise it the same way.
 */
const MAX_RETRIES = 12;

function sdkRefundOperation(url, apiKey, orderId, stats) {
  const kuko = new KukoPay(apiKey, { baseUrl: url, maxRetries: MAX_RETRIES, timeoutMs: 15000 });
  return async (op) => {
    try {
      const refund = await kuko.refunds.create({ order_id: orderId, amount: 1 });
      op.key = refund.lastResponse.idempotencyKey;
      op.refundId = refund.id;
      stats.attempts += refund.lastResponse.attempts;
      if (refund.lastResponse.idempotentReplayed) stats.replays++;
    } catch (error) {
      op.key = error.idempotencyKey ?? null;
      op.failure = `${error.name}: ${error.message}`;
      stats.attempts += MAX_RETRIES + 1;
    }
  };
}

module.exports = { sdkRefundOperation, MAX_RETRIES };
