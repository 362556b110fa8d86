import { Webhook } from 'standardwebhooks';
import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createOrder, TestMerchant } from './support/factories';
import { injectFault } from './support/faults';
import { startTestApp, TestApp } from './support/test-app';
import {
  deliver,
  deliverEvent,
  newEventId,
  NEW_SECRET,
  paymentSucceeded,
  SECRET,
  WEBHOOK_ENV,
} from './support/webhooks';

describe('the webhook receiver (docs/webhooks.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp(WEBHOOK_ENV);
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const eventRows = async (eventId: string) =>
    (await t.db.pool.query('SELECT * FROM webhook_events WHERE event_id = $1', [eventId])).rows;
  const orderRow = async (id: string) => (await t.db.pool.query('SELECT * FROM orders WHERE id = $1', [id])).rows[0];
  const fulfillments = async (orderId: string) =>
    (await t.db.pool.query('SELECT * FROM fulfillments WHERE order_id = $1', [orderId])).rows;

  describe('configuration', () => {
    it('answers 503 webhooks_not_configured without WEBHOOK_SECRETS', async () => {
      const bare = await startTestApp({}, t.db);
      try {
        const response = await deliverEvent(bare, paymentSucceeded('ord_x'));
        expectError(response, 503, 'webhooks_not_configured');
        expect(response.headers['retry-after']).toBe('60');
      } finally {
        await bare.close();
      }
    });

    it('answers 404 for a provider that has no secret', async () => {
      expectError(
        await deliverEvent(t, paymentSucceeded('ord_x'), { provider: 'other' }),
        404,
        'resource_missing',
        'provider',
      );
    });
  });

  describe('verification', () => {
    it.each([
      ['webhook-id missing', { headers: { 'webhook-id': undefined } }, 'webhook-id'],
      ['webhook-timestamp missing', { headers: { 'webhook-timestamp': undefined } }, 'webhook-timestamp'],
      ['webhook-signature missing', { headers: { 'webhook-signature': undefined } }, 'webhook-signature'],
      ['timestamp not a number', { headers: { 'webhook-timestamp': 'yesterday' } }, 'webhook-timestamp'],
      ['signature by another secret', { secret: NEW_SECRET }, 'webhook-signature'],
      ['signature garbage', { signature: 'v1,bm90IGEgc2lnbmF0dXJl' }, 'webhook-signature'],
      ['only other versions', { signature: 'v2,abc v1a,def' }, 'webhook-signature'],
      ['timestamp 301 s old', { skew: -301 }, 'webhook-timestamp'],
      // The server reads its clock a little after the test does: across a second boundary,
      // a timestamp 301 s ahead is then 300 s ahead of the server's whole seconds, and accepted.
      ['timestamp 302 s ahead', { skew: 302 }, 'webhook-timestamp'],
    ])(
      'refuses %s with 400 webhook_signature_invalid naming the header, recording nothing',
      async (_, options, header) => {
        const order = await createOrder(t, merchant.testKey);
        const event = paymentSucceeded(order.id);
        const response = await deliverEvent(t, event, options as object);
        expectError(response, 400, 'webhook_signature_invalid', header);
        expect(await eventRows(event.id)).toEqual([]);
        expect((await orderRow(order.id)).status).toBe('pending');
      },
    );

    it('accepts timestamps up to 5 minutes off either way', async () => {
      for (const skew of [-295, 295]) {
        const order = await createOrder(t, merchant.testKey);
        expectSuccess(await deliverEvent(t, paymentSucceeded(order.id), { skew }), 200);
      }
    });

    it('accepts when any of several v1 signatures matches, ignoring other versions', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      const body = JSON.stringify(event);
      const timestamp = new Date();
      const good = new Webhook(SECRET).sign(event.id, timestamp, body);
      const response = await deliver(t, {
        body,
        signature: `v2,ignored v1,bm9wZQ== ${good}`,
        headers: { 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)) },
      });
      expectSuccess(response, 200);
    });

    it('verifies the raw bytes: a pretty-printed body with \\u20ac escapes passes, the same event re-serialised fails', async () => {
      const order = await createOrder(t, merchant.testKey);
      const id = newEventId();
      const pretty = `{\n  "id": "${id}",\n  "type": "payment.succeeded",\n  "created_at": "2026-11-29T08:00:00Z",\n  "data": {\n    "order_id": "${order.id}",\n    "amount": 2990,\n    "currency": "USD",\n    "provider_payment_id": "pay_\\u20ac_1"\n  }\n}\n`;
      const timestamp = new Date();
      const signature = new Webhook(SECRET).sign(id, timestamp, pretty);
      const headers = { 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)) };

      const reserialised = JSON.stringify(JSON.parse(pretty));
      expectError(
        await deliver(t, { body: reserialised, id, signature, headers }),
        400,
        'webhook_signature_invalid',
        'webhook-signature',
      );
      expect(await eventRows(id)).toEqual([]);

      const response = await deliver(t, { body: pretty, id, signature, headers });
      expectSuccess(response, 200);
      expect(response.body.data).toEqual({ received: true, duplicate: false, status: 'processed' });
      expect((await fulfillments(order.id))[0].provider_payment_id).toBe('pay_€_1');
    });

    it('rotates secrets: old and new both pass while both are configured; a removed one fails', async () => {
      const rotating = await startTestApp({ WEBHOOK_SECRETS: `kukopay=${SECRET} ${NEW_SECRET}` }, t.db);
      const rotated = await startTestApp({ WEBHOOK_SECRETS: `kukopay=${NEW_SECRET}` }, t.db);
      try {
        for (const secret of [SECRET, NEW_SECRET]) {
          const order = await createOrder(t, merchant.testKey);
          expectSuccess(await deliverEvent(rotating, paymentSucceeded(order.id), { secret }), 200);
        }
        const order = await createOrder(t, merchant.testKey);
        expectError(
          await deliverEvent(rotated, paymentSucceeded(order.id), { secret: SECRET }),
          400,
          'webhook_signature_invalid',
          'webhook-signature',
        );
        expectSuccess(await deliverEvent(rotated, paymentSucceeded(order.id), { secret: NEW_SECRET }), 200);
      } finally {
        await rotating.close();
        await rotated.close();
      }
    });
  });

  describe('bad bodies', () => {
    it.each([
      ['not JSON', '{"id": "evt_1", ', 400, 'invalid_json', null],
      ['empty', '', 400, 'invalid_json', null],
      [
        'led by two byte order marks',
        '\uFEFF\uFEFF{"id":"evt_same","type":"x","created_at":"2026-11-29T08:00:00Z","data":{}}',
        400,
        'invalid_json',
        null,
      ],
      ['an array', '[1, 2]', 400, 'parameter_invalid', null],
      [
        'with a created_at that is not a time',
        '{"id":"evt_same","type":"x","created_at":"yesterday","data":{}}',
        400,
        'parameter_invalid',
        'created_at',
      ],
      [
        'with a created_at on a day that does not exist',
        '{"id":"evt_same","type":"x","created_at":"2020-02-30T00:00:00Z","data":{}}',
        400,
        'parameter_invalid',
        'created_at',
      ],
      [
        'with a created_at at hour 24',
        '{"id":"evt_same","type":"x","created_at":"2026-11-29T24:00:00Z","data":{}}',
        400,
        'parameter_invalid',
        'created_at',
      ],
      [
        'without a type',
        '{"id":"evt_same","created_at":"2026-11-29T08:00:00Z","data":{}}',
        400,
        'parameter_invalid',
        'type',
      ],
      [
        'without data',
        '{"id":"evt_same","type":"payment.succeeded","created_at":"2026-11-29T08:00:00Z"}',
        400,
        'parameter_invalid',
        'data',
      ],
      [
        'with an id other than webhook-id',
        '{"id":"evt_other","type":"x","created_at":"2026-11-29T08:00:00Z","data":{}}',
        400,
        'parameter_invalid',
        'id',
      ],
      [
        'a payment without an amount',
        '{"id":"evt_same","type":"payment.succeeded","created_at":"2026-11-29T08:00:00Z","data":{"order_id":"ord_1","currency":"USD","provider_payment_id":"p"}}',
        400,
        'parameter_invalid',
        'data.amount',
      ],
      [
        'a payment whose amount is written with a fraction (1.9999999999999999 would read as 2)',
        '{"id":"evt_same","type":"payment.succeeded","created_at":"2026-11-29T08:00:00Z","data":{"order_id":"ord_1","amount":1.9999999999999999,"currency":"USD","provider_payment_id":"p"}}',
        400,
        'parameter_invalid',
        'data.amount',
      ],
      [
        'a payment whose amount is written with an exponent',
        '{"id":"evt_same","type":"payment.succeeded","created_at":"2026-11-29T08:00:00Z","data":{"order_id":"ord_1","amount":299e1,"currency":"USD","provider_payment_id":"p"}}',
        400,
        'parameter_invalid',
        'data.amount',
      ],
      [
        'with data written as a number',
        '{"id":"evt_same","type":"payment.succeeded","created_at":"2026-11-29T08:00:00Z","data":1.5}',
        400,
        'parameter_invalid',
        'data',
      ],
      [
        'with a NUL character',
        '{"id":"evt_same","type":"x","created_at":"2026-11-29T08:00:00Z","data":{"note":"a\\u0000b"}}',
        400,
        'parameter_invalid',
        'data.note',
      ],
      [
        'with an unpaired surrogate',
        '{"id":"evt_same","type":"x","created_at":"2026-11-29T08:00:00Z","data":{"note":"\\ud800"}}',
        400,
        'parameter_invalid',
        'data.note',
      ],
      [
        'nested 20,000 levels deep',
        `{"id":"evt_same","type":"x","created_at":"2026-11-29T08:00:00Z","data":{"n":${'['.repeat(20000)}${']'.repeat(20000)}}}`,
        400,
        'parameter_invalid',
        'data',
      ],
    ])('refuses a signed body that is %s, recording nothing', async (_, body, status, error, param) => {
      const response = await deliver(t, { body, id: 'evt_same' });
      expectError(response, status, error, param);
      expect(await eventRows('evt_same')).toEqual([]);
    });

    it('refuses an event id too long to be a deduplication key (400, not 500), recording nothing', async () => {
      const order = await createOrder(t, merchant.testKey);
      const long = `evt_${'x'.repeat(2996)}`;
      const response = await deliverEvent(t, paymentSucceeded(order.id, {}, long), { id: long });
      expectError(response, 400, 'parameter_invalid', 'id');
      expect(await eventRows(long)).toEqual([]);
      const longest = `evt_${'x'.repeat(251)}`;
      expectSuccess(await deliverEvent(t, paymentSucceeded(order.id, {}, longest), { id: longest }), 200);
    });

    // The verifier signs text: bytes that are not UTF-8 must not be checked as their
    // decoded form (U+FFFD), which another, valid body could share.
    it('refuses a body that is not UTF-8 as invalid_json, however it is signed, recording nothing', async () => {
      const order = await createOrder(t, merchant.testKey);
      const id = newEventId();
      const event = JSON.stringify(paymentSucceeded(order.id, { provider_payment_id: 'pay_\uFFFD' }, id));
      const [before, after] = event.split('\uFFFD');
      const bytes = Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]);
      const at = new Date();
      // Signed over the bytes sent (deliver's default), and over the text they decode to.
      for (const signature of [undefined, new Webhook(SECRET).sign(id, at, event)]) {
        expectError(await deliver(t, { body: bytes, id, at, signature }), 400, 'invalid_json');
      }
      // Unsigned, it is refused for that first, as any body is.
      const unsigned = await deliver(t, { body: bytes, id, headers: { 'webhook-signature': undefined } });
      expectError(unsigned, 400, 'webhook_signature_invalid', 'webhook-signature');
      expect(await eventRows(id)).toEqual([]);
      expect((await orderRow(order.id)).status).toBe('pending');
    });

    // RFC 8259 §8.1 lets a parser ignore one (docs/errors.md); the signature covers it.
    it('accepts a signed body led by one byte order mark', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      const response = await deliver(t, { body: `\uFEFF${JSON.stringify(event)}`, id: event.id });
      expectSuccess(response, 200);
      expect(response.body.data).toEqual({ received: true, duplicate: false, status: 'processed' });
    });

    it('refuses another content type with 415, and accepts JSON with a charset', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      expectError(
        await deliverEvent(t, event, { contentType: 'text/plain' }),
        415,
        'unsupported_media_type',
        'Content-Type',
      );
      expect(await eventRows(event.id)).toEqual([]);
      expectSuccess(await deliverEvent(t, event, { contentType: 'application/json; charset=utf-8' }), 200);
    });
  });

  describe('exactly once', () => {
    it('pays the order, creates one fulfilment and records the event', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      const response = await deliverEvent(t, event);
      expectSuccess(response, 200);
      expect(response.body.data).toEqual({ received: true, duplicate: false, status: 'processed' });

      const paid = await t.http().get(`/v1/orders/${order.id}`).set('X-Api-Key', merchant.testKey);
      expect(paid.body.data.status).toBe('paid');
      expect(paid.body.data.paid_at).not.toBeNull();
      const [fulfilment] = await fulfillments(order.id);
      expect(fulfilment).toMatchObject({
        merchant_id: merchant.id,
        environment: 'test',
        provider: 'kukopay',
        event_id: event.id,
      });
      expect(await eventRows(event.id)).toEqual([
        expect.objectContaining({
          provider: 'kukopay',
          type: 'payment.succeeded',
          status: 'processed',
          order_id: order.id,
          merchant_id: merchant.id,
        }),
      ]);
    });

    it('answers a repeated delivery, even days later with a fresh signature, as a duplicate that changes nothing', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      await deliverEvent(t, event).expect(200);
      const before = await orderRow(order.id);
      await t.db.pool.query(`UPDATE webhook_events SET received_at = now() - interval '3 days' WHERE event_id = $1`, [
        event.id,
      ]);

      for (const skew of [0, 1]) {
        const again = await deliverEvent(t, event, { skew });
        expectSuccess(again, 200);
        expect(again.body.data).toEqual({ received: true, duplicate: true });
      }
      expect(await orderRow(order.id)).toEqual(before);
      expect(await fulfillments(order.id)).toHaveLength(1);
      expect(await eventRows(event.id)).toHaveLength(1);
    });

    it('answers a repeat as a duplicate before reading its body: one whose body would be refused changes nothing', async () => {
      const event = { id: newEventId(), type: 'merchant.greeted', created_at: new Date().toISOString(), data: {} };
      expect((await deliverEvent(t, event).expect(200)).body.data.status).toBe('ignored');
      const head = `{"id":"${event.id}","type":"payment.succeeded","created_at":"2026-11-29T08:00:00Z"`;
      for (const body of [
        `${head},"data":5}`,
        `${head},"data":{"order_id":"\\u0000"}}`,
        `${head},"data":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
        `${head},"data":{}`,
        '',
      ]) {
        const again = await deliver(t, { body, id: event.id });
        expectSuccess(again, 200);
        expect(again.body.data).toEqual({ received: true, duplicate: true });
      }
      expect(await eventRows(event.id)).toEqual([
        expect.objectContaining({ type: 'merchant.greeted', status: 'ignored' }),
      ]);
    });

    it('takes 20 concurrent deliveries of one event as one', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      const responses = await Promise.all(Array.from({ length: 20 }, () => deliverEvent(t, event)));
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(responses.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
      expect(await fulfillments(order.id)).toHaveLength(1);
      expect(await eventRows(event.id)).toHaveLength(1);
    });

    it('fulfils once when two different event ids report one payment', async () => {
      const order = await createOrder(t, merchant.testKey);
      const [first, second] = await Promise.all([
        deliverEvent(t, paymentSucceeded(order.id)),
        deliverEvent(t, paymentSucceeded(order.id)),
      ]);
      expect([first.body.data.status, second.body.data.status].sort()).toEqual(['ignored', 'processed']);
      expect(await fulfillments(order.id)).toHaveLength(1);
    });
  });

  describe('outcomes', () => {
    it.each([
      ['amount', { amount: 2991 }],
      ['currency', { currency: 'EUR' }],
    ])('rejects a payment whose %s does not match, leaving the order untouched', async (_, data) => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id, data);
      const response = await deliverEvent(t, event);
      expectSuccess(response, 200);
      expect(response.body.data).toEqual({ received: true, duplicate: false, status: 'rejected' });
      expect((await orderRow(order.id)).status).toBe('pending');
      expect(await fulfillments(order.id)).toEqual([]);
      expect((await eventRows(event.id))[0]).toMatchObject({
        status: 'rejected',
        reason: expect.stringContaining('does not match'),
      });
    });

    it('ignores a payment for a closed order, and an unknown event type', async () => {
      const order = await createOrder(t, merchant.testKey);
      await t.http().post(`/v1/orders/${order.id}/close`).set('X-Api-Key', merchant.testKey).expect(200);
      const response = await deliverEvent(t, paymentSucceeded(order.id));
      expect(response.body.data.status).toBe('ignored');
      expect((await orderRow(order.id)).status).toBe('closed');

      const unknown = { id: newEventId(), type: 'dispute.created', created_at: new Date().toISOString(), data: {} };
      const ignored = await deliverEvent(t, unknown);
      expectSuccess(ignored, 200);
      expect(ignored.body.data).toEqual({ received: true, duplicate: false, status: 'ignored' });
      expect((await eventRows(unknown.id))[0].status).toBe('ignored');
    });

    it('records payment.failed and leaves the order payable', async () => {
      const order = await createOrder(t, merchant.testKey);
      const failed = {
        id: newEventId(),
        type: 'payment.failed',
        created_at: new Date().toISOString(),
        data: { order_id: order.id, failure_code: 'card_declined', failure_message: 'Declined' },
      };
      const response = await deliverEvent(t, failed);
      expect(response.body.data).toEqual({ received: true, duplicate: false, status: 'processed' });
      expect((await orderRow(order.id)).status).toBe('pending');
      expect((await deliverEvent(t, paymentSucceeded(order.id))).body.data.status).toBe('processed');
      expect((await orderRow(order.id)).status).toBe('paid');
    });

    it.each([
      ['payment.failed', 'failure_code', 5],
      ['payment.failed', 'failure_message', { text: 'm' }],
      ['refund.failed', 'failure_code', null],
    ])(
      'refuses a %s whose optional %s is not a string (%p), as the document says, recording nothing',
      async (type, name, value) => {
        const order = await createOrder(t, merchant.testKey);
        const data =
          type === 'payment.failed' ? { order_id: order.id } : { refund_id: 'rf_0123456789abcdef0123456789abcdef' };
        const event = {
          id: newEventId(),
          type,
          created_at: new Date().toISOString(),
          data: { ...data, [name]: value },
        };
        const response = await deliverEvent(t, event);
        expectError(response, 400, 'parameter_invalid', `data.${name}`);
        expect(response.body.message).toBe(`data.${name} must be a string, or left out.`);
        expect(await eventRows(event.id)).toEqual([]);
      },
    );

    it.each([
      ['payment.succeeded', { order_id: `ord_${'x'.repeat(3000)}` }, 'data.order_id'],
      ['payment.failed', { order_id: 'ord_1', failure_code: 'c', failure_message: 'm' }, 'data.order_id'],
      ['refund.succeeded', { refund_id: 'rf_0123456789ABCDEF0123456789abcdef' }, 'data.refund_id'],
    ])(
      'refuses a %s for an id that no object can have (400, not retry later), recording nothing',
      async (type, data, param) => {
        // A payment's other fields are valid: only the id is wrong.
        const payment = paymentSucceeded('');
        const event = { ...payment, type, data: { ...(type === 'payment.succeeded' ? payment.data : {}), ...data } };
        const response = await deliverEvent(t, event);
        expectError(response, 400, 'parameter_invalid', param);
        expect(response.body.message).toMatch(/must be an? (order|refund) id \((ord|rf)_ and 32 hexadecimal digits\)/);
        expect(await eventRows(event.id)).toEqual([]);
      },
    );

    it('answers 503 resource_not_ready for an order that does not exist yet, recording nothing; the retry applies it', async () => {
      const orderId = 'ord_0123456789abcdef0123456789abcdef';
      const event = paymentSucceeded(orderId);
      const early = await deliverEvent(t, event);
      expectError(early, 503, 'resource_not_ready', 'data.order_id');
      expect(early.headers['retry-after']).toBe('5');
      expect(await eventRows(event.id)).toEqual([]);

      // The order's transaction commits after the provider's first attempt.
      await t.db.pool.query(
        `INSERT INTO orders (id, merchant_id, environment, out_trade_no, amount, currency, subject)
         VALUES ($1, $2, 'test', 'LATE_ORDER', 2990, 'USD', 'Late')`,
        [orderId, merchant.id],
      );
      expect((await deliverEvent(t, event)).body.data.status).toBe('processed');
      expect(await fulfillments(orderId)).toHaveLength(1);
    });

    it('rolls everything back, event row included, when applying fails; the retry processes it', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      const restore = await injectFault(
        t.db.pool,
        'fulfillments',
        `RAISE EXCEPTION 'disk full' USING ERRCODE = '53100';`,
      );
      try {
        const failed = await deliverEvent(t, event);
        expect(failed.status).toBeGreaterThanOrEqual(500);
        expect(failed.body.type).toBe('api_error');
        expect(failed.body.message).not.toContain('disk full');
        expect(await eventRows(event.id)).toEqual([]);
        expect((await orderRow(order.id)).status).toBe('pending');
      } finally {
        await restore();
      }
      expect((await deliverEvent(t, event)).body.data).toEqual({
        received: true,
        duplicate: false,
        status: 'processed',
      });
      expect(await fulfillments(order.id)).toHaveLength(1);
    });

    it('never answers a redirect, also with a trailing slash', async () => {
      const order = await createOrder(t, merchant.testKey);
      const event = paymentSucceeded(order.id);
      const response = await deliverEvent(t, event, { provider: 'kukopay/' });
      expectSuccess(response, 200);
    });
  });
});
