import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createOrder, orderBody, TestMerchant } from './support/factories';
import { startTestApp, TestApp } from './support/test-app';

const ORDER_KEYS = [
  'amount',
  'amount_refunded',
  'closed_at',
  'created_at',
  'currency',
  'description',
  'environment',
  'id',
  'metadata',
  'notify_url',
  'object',
  'out_trade_no',
  'paid_at',
  'return_url',
  'status',
  'subject',
];

describe('orders', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const post = (body: unknown, key = merchant.testKey) =>
    t
      .http()
      .post('/v1/orders')
      .set('X-Api-Key', key)
      .send(body as object);
  const get = (path: string, key = merchant.testKey) => t.http().get(path).set('X-Api-Key', key);

  it('creates an order: 201, the order object, its Location, and the row', async () => {
    const body = orderBody({
      description: 'Twelve months',
      metadata: { customer: 'c_42' },
      notify_url: 'https://merchant.example/notify',
      return_url: 'http://localhost:8080/thanks',
    });
    const response = await post(body);
    expectSuccess(response, 201);
    const order = response.body.data;
    expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
    expect(order).toMatchObject({
      object: 'order',
      out_trade_no: body.out_trade_no,
      amount: 2990,
      currency: 'USD',
      subject: 'Annual plan',
      description: 'Twelve months',
      status: 'pending',
      amount_refunded: 0,
      environment: 'test',
      metadata: { customer: 'c_42' },
      notify_url: 'https://merchant.example/notify',
      return_url: 'http://localhost:8080/thanks',
      paid_at: null,
      closed_at: null,
    });
    expect(order.id).toMatch(/^ord_[0-9a-f]{32}$/);
    expect(new Date(order.created_at).toISOString()).toBe(order.created_at);
    expect(response.headers.location).toBe(`/v1/orders/${order.id}`);

    const { rows } = await t.db.pool.query('SELECT merchant_id, environment, amount FROM orders WHERE id = $1', [
      order.id,
    ]);
    expect(rows).toEqual([{ merchant_id: merchant.id, environment: 'test', amount: '2990' }]);
  });

  it.each([
    ['out_trade_no', 'parameter_missing', undefined],
    ['out_trade_no', 'parameter_invalid', ''],
    ['out_trade_no', 'parameter_invalid', 'has space'],
    ['out_trade_no', 'parameter_invalid', 'x'.repeat(65)],
    ['out_trade_no', 'parameter_invalid', 42],
    ['amount', 'parameter_missing', undefined],
    ['amount', 'parameter_invalid', 0],
    ['amount', 'parameter_invalid', -5],
    ['amount', 'parameter_invalid', 12.5],
    ['amount', 'parameter_invalid', '2990'],
    ['amount', 'parameter_invalid', 100000000001],
    ['currency', 'parameter_missing', undefined],
    ['currency', 'parameter_invalid', 'usd'],
    ['currency', 'parameter_invalid', 'XYZ'],
    ['currency', 'parameter_invalid', 'DOLLARS'],
    ['subject', 'parameter_missing', undefined],
    ['subject', 'parameter_invalid', ''],
    ['subject', 'parameter_invalid', 's'.repeat(257)],
    ['description', 'parameter_invalid', 'd'.repeat(1001)],
    ['description', 'parameter_invalid', 7],
    ['notify_url', 'parameter_invalid', 'http://127.0.0.1/notify'],
    ['notify_url', 'parameter_invalid', 'ftp://merchant.example'],
    ['notify_url', 'parameter_invalid', '/relative'],
    ['notify_url', 'parameter_invalid', `https://merchant.example/${'p'.repeat(2048)}`],
    // Forms the WHATWG parser would rewrite into another URL, and a port nothing listens on.
    ['notify_url', 'parameter_invalid', ' https://merchant.example/notify'],
    ['notify_url', 'parameter_invalid', 'https:\\\\merchant.example/notify'],
    ['notify_url', 'parameter_invalid', 'https:///merchant.example/notify'],
    ['notify_url', 'parameter_invalid', 'https:merchant.example/notify'],
    ['notify_url', 'parameter_invalid', 'https://merchant.example/no tify'],
    ['notify_url', 'parameter_invalid', 'https://merchant.exa\nmple/notify'],
    ['notify_url', 'parameter_invalid', 'https://merchant.example:0/notify'],
    ['notify_url', 'parameter_invalid', 'https://@merchant.example/notify'],
    // Hosts IDNA would turn into other labels, and a C1 control.
    ['notify_url', 'parameter_invalid', 'https://merchant.example%2Eevil.example/notify'],
    ['notify_url', 'parameter_invalid', 'https://merchant.example\u3002evil.example/notify'],
    ['notify_url', 'parameter_invalid', 'https://merchant.example/\u0085notify'],
    // Not ASCII: new URL would send it as another text (xn--…, %C3%A9) than the one stored.
    ['notify_url', 'parameter_invalid', 'https://пример.example/notify'],
    ['notify_url', 'parameter_invalid', 'https://merchant.example/caf\u00e9'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/\u{1F600}'],
    ['return_url', 'parameter_invalid', 'https:///merchant.example/done'],
    // Characters RFC 3986 (and so a `format: uri` validator) does not allow, which the
    // WHATWG parser would send percent-encoded, and escapes that are not two hex digits.
    ['return_url', 'parameter_invalid', 'https://merchant.example/a|b'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/a"b'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/a<b>'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/a^b'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/a`b'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/{x}'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/%zz'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/a%'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/?q=[x]'],
    ['return_url', 'parameter_invalid', 'https://merchant.example/#a#b'],
    ['notify_url', 'parameter_invalid', 'https://merch"ant.example/notify'],
    ['return_url', 'parameter_invalid', 'javascript:alert(1)'],
    ['metadata', 'parameter_invalid', 'not an object'],
    ['metadata', 'parameter_invalid', ['a']],
    ['metadata', 'parameter_invalid', { n: 1 }],
    ['metadata', 'parameter_invalid', { ['k'.repeat(41)]: 'v' }],
    ['metadata', 'parameter_invalid', { k: 'v'.repeat(501) }],
    ['metadata', 'parameter_invalid', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))],
    ['subject', 'parameter_invalid', 'nul\u0000byte'],
  ])('refuses a bad %s with %s naming it (case %#)', async (field, error, value) => {
    const body = orderBody({ [field]: value });
    if (value === undefined) delete body[field];
    const response = await post(body);
    expectError(response, 400, error, field);
    const { rows } = await t.db.pool.query('SELECT 1 FROM orders WHERE out_trade_no = $1', [body.out_trade_no]);
    expect(rows).toHaveLength(0);
  });

  it.each([
    ['subject', 'subject must not be null: send a value'],
    ['description', 'description must not be null: leave it out, or send a value'],
    ['metadata', 'metadata must not be null: leave it out, or send a value'],
  ])('says %s must not be null, not which rule a value would break', async (field, message) => {
    const response = await post(orderBody({ [field]: null }));
    expectError(response, 400, 'parameter_invalid', field);
    expect(response.body.message).toBe(message);
  });

  it.each([
    ['subject', 5],
    ['description', true],
    ['out_trade_no', 42],
    ['subject', ['s']],
  ])('says %s must be a string when sent %j, not the length or pattern a string would need', async (field, value) => {
    const response = await post(orderBody({ [field]: value }));
    expectError(response, 400, 'parameter_invalid', field);
    expect(response.body.message).toBe(`${field} must be a string`);
  });

  it('accepts the bounds of every field', async () => {
    const response = await post(
      orderBody({
        out_trade_no: `b-_${'9'.repeat(57)}${Date.now() % 1000}`.slice(0, 64),
        amount: 100000000000,
        currency: 'JPY',
        subject: 's'.repeat(256),
        description: 'd'.repeat(1000),
        metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${'k'.repeat(38)}${i}`, 'v'.repeat(500)])),
      }),
    );
    expectSuccess(response, 201);
    expect(response.body.data.amount).toBe(100000000000);
  });

  it('stores URLs as written, where RFC 3986 allows the form (scheme and host in any case, a port, a query)', async () => {
    const notifyUrl = 'HTTPS://Merchant.Example:8443/notify?order=1#part';
    const returnUrl = "https://[2001:db8::1]:8443/done;v=1/a@b:c~_.-?a=%20b&!$'()*+,;=/?#part/?x";
    const response = await post(orderBody({ notify_url: notifyUrl, return_url: returnUrl }));
    expectSuccess(response, 201);
    expect(response.body.data).toMatchObject({ notify_url: notifyUrl, return_url: returnUrl });
  });

  it('refuses unknown fields', async () => {
    expectError(await post(orderBody({ amount_cents: 1 })), 400, 'parameter_unknown', 'amount_cents');
  });

  it('returns the original order with 200 for a repeated out_trade_no, even with other fields (the blind spot)', async () => {
    const first = await post(orderBody({ out_trade_no: 'BLIND_SPOT_1' }));
    expectSuccess(first, 201);
    const again = await post(orderBody({ out_trade_no: 'BLIND_SPOT_1', amount: 1, subject: 'Different' }));
    expectSuccess(again, 200);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.headers.location).toBeUndefined();
    const { rows } = await t.db.pool.query(`SELECT count(*)::int AS n FROM orders WHERE out_trade_no = 'BLIND_SPOT_1'`);
    expect(rows[0].n).toBe(1);
  });

  it('keeps test and live, and merchants, apart', async () => {
    const other = await createMerchant(t, 'Other');
    const body = orderBody({ out_trade_no: 'SHARED_NO' });
    const test = await post(body);
    const live = await post(body, merchant.liveKey);
    const foreign = await post(body, other.testKey);
    for (const response of [test, live, foreign]) expectSuccess(response, 201);
    expect(new Set([test.body.data.id, live.body.data.id, foreign.body.data.id]).size).toBe(3);
    expect(live.body.data.environment).toBe('live');

    expectError(await get(`/v1/orders/${test.body.data.id}`, merchant.liveKey), 404, 'resource_missing', 'id');
    expectError(await get(`/v1/orders/${test.body.data.id}`, other.testKey), 404, 'resource_missing', 'id');
    const closeForeign = await t.http().post(`/v1/orders/${test.body.data.id}/close`).set('X-Api-Key', other.testKey);
    expectError(closeForeign, 404, 'resource_missing', 'id');
    expect((await get(`/v1/orders/${test.body.data.id}`)).body.data.status).toBe('pending');
  });

  it('gets an order by id and by out_trade_no', async () => {
    const order = await createOrder(t, merchant.testKey);
    const byId = await get(`/v1/orders/${order.id}`);
    expectSuccess(byId, 200);
    expect(byId.body.data.id).toBe(order.id);
    const byNo = await get(`/v1/orders?out_trade_no=${order.out_trade_no}`);
    expectSuccess(byNo, 200);
    expect(byNo.body.data.id).toBe(order.id);
    expectError(await get('/v1/orders/ord_00000000000000000000000000000000'), 404, 'resource_missing', 'id');
    expectError(await get('/v1/orders?out_trade_no=NOPE'), 404, 'resource_missing', 'out_trade_no');
    expectError(await get('/v1/orders?colour=red'), 400, 'parameter_unknown', 'colour');
    expectError(await get(`/v1/orders?out_trade_no=${order.out_trade_no}&limit=5`), 400, 'parameter_invalid', 'limit');
  });

  it('lists newest first with cursor pagination', async () => {
    const fresh = await createMerchant(t, 'Lister');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createOrder(t, fresh.testKey)).id);
    const newestFirst = [...ids].reverse();

    const first = await get('/v1/orders?limit=2', fresh.testKey);
    expectSuccess(first, 200);
    expect(first.body.data.map((o: { id: string }) => o.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const second = await get(`/v1/orders?limit=2&starting_after=${newestFirst[1]}`, fresh.testKey);
    expect(second.body.data.map((o: { id: string }) => o.id)).toEqual(newestFirst.slice(2, 4));
    const last = await get(`/v1/orders?limit=2&starting_after=${newestFirst[3]}`, fresh.testKey);
    expect(last.body.data.map((o: { id: string }) => o.id)).toEqual(newestFirst.slice(4));
    expect(last.body.has_more).toBe(false);
    const all = await get('/v1/orders', fresh.testKey);
    expect(all.body.data).toHaveLength(5);
    expect((await get('/v1/orders', fresh.liveKey)).body.data).toEqual([]);

    expectError(await get('/v1/orders?limit=0', fresh.testKey), 400, 'parameter_invalid', 'limit');
    expectError(await get('/v1/orders?limit=101', fresh.testKey), 400, 'parameter_invalid', 'limit');
    expectError(await get('/v1/orders?limit=abc', fresh.testKey), 400, 'parameter_invalid', 'limit');
    for (const loose of ['0x10', '1e1', '10.0', '+5', '%2010', '10%20']) {
      expectError(await get(`/v1/orders?limit=${loose}`, fresh.testKey), 400, 'parameter_invalid', 'limit');
    }
    // Given twice: said so (not that a list is no integer); an unknown one is unknown first.
    const twice = await get('/v1/orders?limit=2&limit=3', fresh.testKey);
    expectError(twice, 400, 'parameter_invalid', 'limit');
    expect(twice.body.message).toBe('limit was given 2 times; give it once');
    expectError(await get('/v1/orders?limit=2&limit=3&x=1&x=2', fresh.testKey), 400, 'parameter_unknown', 'x');
    expectError(
      await get('/v1/orders?starting_after=ord_00000000000000000000000000000000', fresh.testKey),
      404,
      'resource_missing',
      'starting_after',
    );
    const empty = await get('/v1/orders?starting_after=', fresh.testKey);
    expectError(empty, 400, 'parameter_invalid', 'starting_after');
    expect(empty.body.message).toBe(
      'starting_after must not be empty: leave it out, or send the last id of the previous page',
    );
    // A cursor of 15,000 characters is quoted by its first 100, not echoed back whole.
    const long = await get(`/v1/orders?starting_after=ord_${'a'.repeat(15_000)}`, fresh.testKey);
    expectError(long, 404, 'resource_missing', 'starting_after');
    expect(long.body.message).toBe(`No such order: 'ord_${'a'.repeat(96)}…'`);
  });

  it('pages through orders created within one millisecond without skipping any', async () => {
    const fresh = await createMerchant(t, 'Same millisecond');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await createOrder(t, fresh.testKey)).id);
    // Microseconds apart, within one millisecond, as concurrent creates commit.
    await t.db.pool.query(
      `UPDATE orders SET created_at = '2026-11-30T12:00:00.123000Z'::timestamptz + make_interval(secs => (array_position($1::text[], id)) / 1e6)
        WHERE id = ANY($1)`,
      [ids],
    );
    const seen: string[] = [];
    let page = await get('/v1/orders?limit=1', fresh.testKey);
    seen.push(...page.body.data.map((o: { id: string }) => o.id));
    while (page.body.has_more) {
      page = await get(`/v1/orders?limit=1&starting_after=${seen[seen.length - 1]}`, fresh.testKey);
      seen.push(...page.body.data.map((o: { id: string }) => o.id));
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('closes a pending order, once', async () => {
    const order = await createOrder(t, merchant.testKey);
    const close = () => t.http().post(`/v1/orders/${order.id}/close`).set('X-Api-Key', merchant.testKey);
    const closed = await close();
    expectSuccess(closed, 200);
    expect(closed.body.data.status).toBe('closed');
    expect(closed.body.data.closed_at).not.toBeNull();
    expectError(await close(), 400, 'order_not_closable', 'id');
    expectError(
      await t.http().post('/v1/orders/ord_00000000000000000000000000000000/close').set('X-Api-Key', merchant.testKey),
      404,
      'resource_missing',
      'id',
    );
  });

  it('creates one order from 30 concurrent requests with one out_trade_no', async () => {
    const body = orderBody();
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => post(body).set('Idempotency-Key', `distinct-${body.out_trade_no}-${i}`)),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(29);
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM orders WHERE out_trade_no = $1', [
      body.out_trade_no,
    ]);
    expect(rows[0].n).toBe(1);
  });
});
