'use strict';
// The provider's `payment.succeeded` event for an order, as the bench sends it (webhook
// scenarios, notification latency): a new event id each time, the body as bytes to sign.
const { randomBytes } = require('node:crypto');

function paymentSucceeded(orderId) {
  const id = `evt_${randomBytes(12).toString('hex')}`;
  const body = JSON.stringify({
    id,
    type: 'payment.succeeded',
    created_at: new Date().toISOString(),
    data: { order_id: orderId, amount: 2990, currency: 'USD', provider_payment_id: `pay_${id.slice(4)}` },
  });
  return { id, body };
}

module.exports = { paymentSucceeded };
