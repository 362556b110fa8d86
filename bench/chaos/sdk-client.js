/**
 * The chaos workers' refund operation through @kukopay/node (`--client sdk`): no retry
 * loop here, the client's own does it (one key minted per call, the same body bytes on
 * every attempt, backoff with jitter). The key is read back from the answer, or from the
 * error, so the harness can check that each refund is stored under its operation's key.
 *
 * A call can still run out of retries while the harness keeps the server down; it then
 * throws KukoPayConnectionError with its key, and the operation's outcome is unknown. The
 * client's documented recipe follows: store the key and call again later with it. Here
 * "later" is once the kills have stopped (`resumeFailed`), and the check that follows
 * proves the late call replayed or executed once, never twice.
 */
const { KukoPay, KukoPayConnectionError } = require('@kukopay/node');

/** More than the default 3: the harness keeps the server down for much of the run. */
const MAX_RETRIES = 12;

function sdkRefundOperation(url, apiKey, orderId, stats) {
  const kuko = new KukoPay(apiKey, { baseUrl: url, maxRetries: MAX_RETRIES, timeoutMs: 15000 });
  const create = async (op, options) => {
    try {
      const refund = await kuko.refunds.create({ order_id: orderId, amount: 1 }, options);
      op.key = refund.lastResponse.idempotencyKey;
      op.refundId = refund.id;
      op.failure = null;
      stats.attempts += refund.lastResponse.attempts;
      if (refund.lastResponse.idempotentReplayed) stats.replays++;
      if (refund.lastResponse.attempts > 1) stats.retriedCalls = (stats.retriedCalls ?? 0) + 1;
    } catch (error) {
      op.key = error.idempotencyKey ?? op.key;
      op.failure = `${error.name}: ${error.message}`;
      op.unknownOutcome = error instanceof KukoPayConnectionError;
      stats.attempts += op.unknownOutcome ? MAX_RETRIES + 1 : 1;
    }
  };
  const operation = (op) => create(op);
  /** The merchant's later call with each stored key; returns how many there were. */
  operation.resumeFailed = async (operations) => {
    const unknown = operations.filter((op) => op.unknownOutcome && op.key);
    for (const op of unknown) await create(op, { idempotencyKey: op.key });
    return unknown.length;
  };
  return operation;
}

module.exports = { sdkRefundOperation, MAX_RETRIES };
