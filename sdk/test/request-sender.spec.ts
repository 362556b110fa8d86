import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import {
  KukoPay,
  KukoPayAPIError,
  KukoPayAuthenticationError,
  KukoPayConnectionError,
  KukoPayError,
  KukoPayIdempotencyError,
  KukoPayInvalidRequestError,
  KukoPayRateLimitError,
} from '../src/index.ts';
import { errorFromAnswer } from '../src/errors.ts';
import { RequestSender } from '../src/request-sender.ts';
import { VERSION } from '../src/version.ts';
import { apiError, ok, ORDER, Reply, ScriptedServer, startScriptedServer } from './support/scripted-server.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const KEY = 'kuko_test_0123456789abcdef';
const ORDER_PARAMS = {
  out_trade_no: 'ORDER_1',
  amount: 2990,
  currency: 'USD',
  subject: 'Annual plan — 年度',
  metadata: { b: '2', a: '1' },
};

describe('the request sender (against a scripted server on 127.0.0.1)', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function client(replies: Reply[], options: { maxRetries?: number; timeoutMs?: number } = {}) {
    server = await startScriptedServer(replies);
    return { kuko: new KukoPay(KEY, { baseUrl: server.url, ...options }), requests: server.requests };
  }

  it('mints one UUID v4 key per call and sends it, with the identical body bytes, on every attempt', async () => {
    const { kuko, requests } = await client([{ status: 503, body: '<html>busy</html>' }, 'destroy', ok(ORDER, 201)]);
    const order = await kuko.orders.create(ORDER_PARAMS);
    expect(order).toEqual(ORDER);
    expect(requests).toHaveLength(3);
    const keys = requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(UUID_V4);
    expect(new Set(keys).size).toBe(1);
    const bytes = Buffer.from(JSON.stringify(ORDER_PARAMS)).toString('hex');
    expect(requests.map((r) => r.body.toString('hex'))).toEqual([bytes, bytes, bytes]);
    expect(order.lastResponse).toMatchObject({ status: 201, attempts: 3, idempotencyKey: keys[0], requestId: 'req_2' });

    await kuko.orders.create(ORDER_PARAMS);
    expect(requests[3].headers['idempotency-key']).toMatch(UUID_V4);
    expect(requests[3].headers['idempotency-key']).not.toBe(keys[0]);
  });

  it('never replaces a caller-supplied key', async () => {
    const { kuko, requests } = await client([
      apiError(409, 'idempotency_in_progress', 'idempotency_error'),
      ok(ORDER, 201),
    ]);
    const order = await kuko.orders.create(ORDER_PARAMS, { idempotencyKey: 'order-ORDER_1' });
    expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(['order-ORDER_1', 'order-ORDER_1']);
    expect(order.lastResponse.idempotencyKey).toBe('order-ORDER_1');
  });

  it('sends the headers of the API: key, JSON, user agent; GETs carry no Idempotency-Key', async () => {
    const { kuko, requests } = await client([ok(ORDER)]);
    await kuko.orders.retrieve('ord_a/b');
    await kuko.orders.close('ord_1', { idempotencyKey: 'close-1' });
    const [get, close] = requests;
    expect(get).toMatchObject({ method: 'GET', url: '/v1/orders/ord_a%2Fb' });
    expect(get.headers).toMatchObject({
      'x-api-key': KEY,
      accept: 'application/json',
      'user-agent': `kukopay-node/${VERSION} node/${process.version}`,
    });
    expect(get.headers['idempotency-key']).toBeUndefined();
    expect(close).toMatchObject({ method: 'POST', url: '/v1/orders/ord_1/close' });
    expect(close.headers['idempotency-key']).toBe('close-1');
    expect(close.headers['content-type']).toBeUndefined();
    expect(close.body.length).toBe(0);
  });

  it('hangs lastResponse on the result without making it part of its JSON', async () => {
    const { kuko } = await client([ok(ORDER, 201, { 'Idempotent-Replayed': 'true', 'X-Request-Id': 'req_first' })]);
    const order = await kuko.orders.create(ORDER_PARAMS);
    expect(order.lastResponse).toMatchObject({
      status: 201,
      idempotentReplayed: true,
      requestId: 'req_first',
      attempts: 1,
    });
    expect(order.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(Object.keys(order)).not.toContain('lastResponse');
    expect(JSON.parse(JSON.stringify(order))).toEqual(ORDER);
  });

  it.each([
    [
      '400 parameter_invalid',
      apiError(400, 'parameter_invalid', 'invalid_request_error', 'amount'),
      KukoPayInvalidRequestError,
    ],
    [
      '400 idempotency_error',
      apiError(400, 'idempotency_error', 'idempotency_error', 'Idempotency-Key'),
      KukoPayIdempotencyError,
    ],
    [
      '401 api_key_invalid',
      apiError(401, 'api_key_invalid', 'authentication_error', 'X-Api-Key'),
      KukoPayAuthenticationError,
    ],
    [
      '404 resource_missing',
      apiError(404, 'resource_missing', 'invalid_request_error', 'id'),
      KukoPayInvalidRequestError,
    ],
    ['413 payload_too_large', apiError(413, 'payload_too_large', 'invalid_request_error'), KukoPayInvalidRequestError],
  ])('throws at once, without retrying, on %s', async (_name, reply, errorClass) => {
    const { kuko, requests } = await client([reply, ok(ORDER, 201)]);
    const error = await kuko.orders.create(ORDER_PARAMS, { idempotencyKey: 'k-4xx' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toBeInstanceOf(KukoPayError);
    const body: Record<string, unknown> =
      typeof reply === 'object' && typeof reply.body === 'object' ? { ...reply.body } : {};
    expect(error).toMatchObject({
      status: body.code,
      code: body.error,
      type: body.type,
      param: body.param,
      message: body.message,
      requestId: 'req_0',
      idempotencyKey: 'k-4xx',
    });
    expect(requests).toHaveLength(1);
  });

  it.each([
    ['503', apiError(503, 'service_unavailable', 'api_error'), KukoPayAPIError, 'service_unavailable'],
    [
      '409',
      apiError(409, 'idempotency_in_progress', 'idempotency_error'),
      KukoPayIdempotencyError,
      'idempotency_in_progress',
    ],
    [
      '429',
      { ...(apiError(429, 'rate_limited', 'rate_limit_error') as object), headers: { 'Retry-After': '0' } },
      KukoPayRateLimitError,
      'rate_limited',
    ],
    ['a 502 page that is not JSON', { status: 502, body: '<html>Bad gateway</html>' }, KukoPayAPIError, null],
  ])('retries %s maxRetries times, then throws the last answer', async (_name, reply, errorClass, code) => {
    const { kuko, requests } = await client([reply as Reply], { maxRetries: 2 });
    const error = await kuko.orders.create(ORDER_PARAMS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toMatchObject({ code, requestId: 'req_2' });
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect((error as KukoPayError).idempotencyKey).toBe(requests[0].headers['idempotency-key']);
  });

  it('gives up on lost connections with a KukoPayConnectionError that carries the key', async () => {
    const { kuko, requests } = await client(['destroy'], { maxRetries: 1 });
    const error = await kuko.refunds.create({ order_id: ORDER.id, amount: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KukoPayConnectionError);
    expect(error).toMatchObject({ type: 'api_connection_error', reason: 'connection', status: null, code: null });
    expect((error as KukoPayConnectionError).idempotencyKey).toMatch(UUID_V4);
    expect((error as KukoPayConnectionError).message).toContain((error as KukoPayConnectionError).idempotencyKey);
    expect(requests).toHaveLength(2);
  });

  it('abandons an attempt after timeoutMs and retries it with the same key', async () => {
    const { kuko, requests } = await client(['hang', ok(ORDER, 201)], { timeoutMs: 300 });
    const order = await kuko.orders.create(ORDER_PARAMS);
    expect(order.lastResponse.attempts).toBe(2);
    expect(requests[1].headers['idempotency-key']).toBe(requests[0].headers['idempotency-key']);

    server!.requests.length = 0;
    const error = await kuko.orders.retrieve(ORDER.id, { timeoutMs: 200, maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KukoPayConnectionError);
    expect(error).toMatchObject({ reason: 'timeout', idempotencyKey: null });
  });

  it('ends a call when its signal aborts, during an attempt or the wait after one, without retrying', async () => {
    const { kuko, requests } = await client(['hang']);
    const during = new AbortController();
    const call = kuko.orders.create(ORDER_PARAMS, { signal: during.signal, idempotencyKey: 'order-1' });
    setTimeout(() => during.abort(), 100);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KukoPayConnectionError);
    expect(error).toMatchObject({ reason: 'aborted', idempotencyKey: 'order-1' });
    // Sent, so it may have run: the message says how to find out.
    expect((error as Error).message).toContain('retry with the same idempotencyKey (order-1)');
    expect(requests).toHaveLength(1);

    // Aborted during the backoff (Retry-After: 8 s): settled long before the wait would end.
    await server!.close();
    const busy = await client([{ status: 503, headers: { 'Retry-After': '8' }, body: '{}' }]);
    const between = new AbortController();
    const started = Date.now();
    const pending = busy.kuko.orders.retrieve(ORDER.id, { signal: between.signal });
    setTimeout(() => between.abort(), 300);
    await expect(pending).rejects.toMatchObject({ reason: 'aborted', idempotencyKey: null });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(busy.requests).toHaveLength(1);

    // Already aborted: nothing is sent.
    await expect(busy.kuko.orders.create(ORDER_PARAMS, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      reason: 'aborted',
    });
    expect(busy.requests).toHaveLength(1);
  });

  it('never shows the API key when the client is serialised or inspected', async () => {
    const kuko = new KukoPay(KEY, { baseUrl: 'http://127.0.0.1:1' });
    expect(JSON.stringify(kuko)).not.toContain(KEY);
    expect(inspect(kuko, { depth: Infinity, showHidden: true })).not.toContain(KEY);
  });

  it('refuses an id that is empty, "." or "..", which the URL would turn into another route', async () => {
    const { kuko, requests } = await client([ok(ORDER)]);
    for (const id of ['', '.', '..']) {
      await expect(kuko.orders.retrieve(id)).rejects.toThrow(TypeError);
      await expect(kuko.events.retrieve(id)).rejects.toThrow(TypeError);
      await expect(kuko.orders.close(id)).rejects.toThrow(TypeError);
    }
    // A rejection of the list, as of every other call, never a throw of list() itself.
    await expect(kuko.refunds.list({ order_id: '..' })).rejects.toThrow(TypeError);
    await expect(Reflect.apply(kuko.refunds.list, kuko.refunds, [])).rejects.toThrow(TypeError);
    // Without the reference, the GET would list the orders and answer a page as an order.
    await expect(kuko.orders.retrieveByOutTradeNo(undefined as unknown as string)).rejects.toThrow(TypeError);
    await expect(kuko.refunds.retrieveByOutRefundNo('')).rejects.toThrow(TypeError);
    expect(requests).toHaveLength(0);
    await kuko.orders.retrieve('...');
    expect(requests.map((r) => r.url)).toEqual(['/v1/orders/...']);
  });

  it('refuses a success whose body is not an answer of the API', async () => {
    const { kuko } = await client([{ status: 200, body: 'OK' }]);
    await expect(kuko.account.retrieve()).rejects.toBeInstanceOf(KukoPayAPIError);
  });

  it('refuses a success whose data no method could return: null, a string, a list page that is no array', async () => {
    for (const data of [null, 'hello', 5]) {
      const { kuko } = await client([{ status: 200, body: { data, request_id: 'req_x' } }]);
      await expect(kuko.orders.retrieve(ORDER.id)).rejects.toMatchObject({
        name: 'KukoPayAPIError',
        status: 200,
        requestId: 'req_0',
      });
      await server?.close();
    }
    const { kuko } = await client([{ status: 200, body: { data: { a: 1 }, has_more: true } }]);
    const walk = async () => {
      for await (const order of kuko.orders.list()) void order;
    };
    await expect(walk()).rejects.toMatchObject({ name: 'KukoPayAPIError', message: expect.stringMatching(/page/) });
  });

  it('reads at most 16 MiB of an answer: a larger one is classed by its status, not as a lost connection', async () => {
    const huge = 'a'.repeat(17 * 1024 * 1024);
    const { kuko } = await client([{ status: 200, body: huge }], { maxRetries: 0 });
    await expect(kuko.orders.create(ORDER_PARAMS)).rejects.toMatchObject({
      name: 'KukoPayAPIError',
      status: 200,
      message: expect.stringMatching(/over 16777216 bytes/),
    });
    await server?.close();
    // A proxy's 502 page: retried as a 502, never downloaded as a connection failure.
    const proxied = await client([
      { status: 502, headers: { 'Content-Type': 'text/html' }, body: huge },
      ok(ORDER, 201),
    ]);
    const order = await proxied.kuko.orders.create(ORDER_PARAMS);
    expect(order.lastResponse).toMatchObject({ status: 201, attempts: 2 });
    expect(proxied.requests).toHaveLength(2);
  });

  it('names the target of a redirect it does not follow, without retrying', async () => {
    const { kuko, requests } = await client([
      { status: 301, headers: { Location: 'https://payments.example.com/v1/orders' }, body: '' },
    ]);
    await expect(kuko.orders.create(ORDER_PARAMS)).rejects.toMatchObject({
      name: 'KukoPayInvalidRequestError',
      status: 301,
      message: expect.stringContaining('a redirect to https://payments.example.com/v1/orders'),
    });
    expect(requests).toHaveLength(1);
  });

  it("takes a success's request id from its body when a proxy emptied the header", async () => {
    const { kuko } = await client([
      { status: 200, headers: { 'X-Request-Id': '' }, body: { data: ORDER, request_id: 'req_b' } },
    ]);
    expect((await kuko.orders.retrieve(ORDER.id)).lastResponse.requestId).toBe('req_b');
  });

  it('refuses a key the server would refuse, or impossible limits, before sending anything', async () => {
    const { kuko, requests } = await client([ok(ORDER, 201), ok(ORDER, 201)]);
    await expect(kuko.orders.create(ORDER_PARAMS, { idempotencyKey: 'line\nbreak' })).rejects.toThrow(TypeError);
    await expect(kuko.orders.create(ORDER_PARAMS, { idempotencyKey: '' })).rejects.toThrow(TypeError);
    await expect(kuko.orders.create(ORDER_PARAMS, { idempotencyKey: 'k'.repeat(256) })).rejects.toThrow(TypeError);
    // HTTP would drop the spaces, and the server store the key without them.
    await expect(kuko.orders.create(ORDER_PARAMS, { idempotencyKey: '  key  ' })).rejects.toThrow(TypeError);
    await expect(kuko.orders.create(ORDER_PARAMS, { idempotencyKey: ' ' })).rejects.toThrow(TypeError);
    await expect(kuko.orders.retrieve(ORDER.id, { timeoutMs: -1 })).rejects.toThrow(TypeError);
    await expect(kuko.orders.retrieve(ORDER.id, { maxRetries: 1.5 })).rejects.toThrow(TypeError);
    expect(requests).toHaveLength(0);
    await kuko.orders.create(ORDER_PARAMS, { idempotencyKey: 'k'.repeat(255) });
    await kuko.orders.create(ORDER_PARAMS, { idempotencyKey: 'a key' });
    expect(requests).toHaveLength(2);
  });

  it("refuses a body over the server's 64 KiB as payload_too_large, without sending or retrying it", async () => {
    const { kuko, requests } = await client([ok(ORDER, 201)]);
    const refusal = kuko.orders.create({ ...ORDER_PARAMS, description: 'x'.repeat(5_000_000) });
    await expect(refusal).rejects.toBeInstanceOf(KukoPayInvalidRequestError);
    await expect(refusal).rejects.toMatchObject({ code: 'payload_too_large', status: null });
    expect(requests).toHaveLength(0);
    await kuko.orders.create({ ...ORDER_PARAMS, description: 'x'.repeat(60_000) });
    expect(requests).toHaveLength(1);
  });

  it('throws at once, without retrying, a request fetch cannot even build', async () => {
    server = await startScriptedServer([ok(ORDER)]);
    // The client's own checks keep such a key out; the sender is the last line.
    const sender = new RequestSender(`${KEY}\u20ac`, { baseUrl: server.url, maxRetries: 3, timeoutMs: 1000 });
    const refusal = sender.send({ method: 'GET', path: '/v1/account' });
    await expect(refusal).rejects.toMatchObject({ name: 'TypeError', message: expect.stringMatching(/ByteString/) });
    expect(server.requests).toHaveLength(0);
  });

  it('checks its options', () => {
    expect(() => new KukoPay('sk_live_x', { baseUrl: 'http://127.0.0.1' })).toThrow(TypeError);
    expect(() => new KukoPay(`${KEY}é`, { baseUrl: 'http://127.0.0.1' })).toThrow(TypeError);
    expect(() => new KukoPay(KEY, { baseUrl: 'http://user:pass@127.0.0.1' })).toThrow('user name or password');
    expect(() => new KukoPay(KEY, { baseUrl: 'http://[bad' })).toThrow('baseUrl must be an http(s) URL.');
    // Node keeps no longer timer: it would fire after 1 ms.
    expect(() => new KukoPay(KEY, { baseUrl: 'http://127.0.0.1', timeoutMs: 2 ** 31 })).toThrow(TypeError);
    expect(() => new KukoPay(KEY, { baseUrl: 'localhost:3000' })).toThrow(TypeError);
    // Every path would follow the query or fragment: calls would all go to the root.
    for (const baseUrl of ['http://127.0.0.1/?a=1', 'http://127.0.0.1/#frag', 'http://127.0.0.1/?']) {
      expect(() => new KukoPay(KEY, { baseUrl })).toThrow('without a query or fragment');
    }
    expect(() => new KukoPay(KEY, { baseUrl: 'http://127.0.0.1/api/' })).not.toThrow();
    expect(() => new KukoPay(KEY, { baseUrl: 'http://127.0.0.1', maxRetries: -1 })).toThrow(TypeError);
    expect(() => new KukoPay(KEY, { baseUrl: 'http://127.0.0.1', timeoutMs: 0 })).toThrow(TypeError);
    const untyped: unknown[] = [KEY];
    expect(() => Reflect.construct(KukoPay, untyped)).toThrow('baseUrl must be an http(s) URL.');
  });

  it('keeps VERSION equal to the package version', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(VERSION).toBe(manifest.version);
  });
});

describe('resource paths and pagination (against a scripted server)', () => {
  let server: ScriptedServer | undefined;
  afterEach(() => server?.close());

  const page = (ids: string[], hasMore: boolean): Reply => ({
    status: 200,
    body: { data: ids.map((id) => ({ id })), has_more: hasMore, request_id: 'r' },
  });

  it('walks every page with for await, each from the last id of the previous one', async () => {
    server = await startScriptedServer([page(['e3', 'e2'], true), page(['e1'], false)]);
    const kuko = new KukoPay(KEY, { baseUrl: `${server.url}/` });
    const ids: string[] = [];
    for await (const event of kuko.events.list({ limit: 2, type: 'order.paid' })) ids.push(event.id);
    expect(ids).toEqual(['e3', 'e2', 'e1']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/events?limit=2&type=order.paid',
      '/v1/events?limit=2&type=order.paid&starting_after=e2',
    ]);
  });

  it('takes finally() on a list, as on any promise', async () => {
    server = await startScriptedServer([page(['ord_1'], false)]);
    const kuko = new KukoPay(KEY, { baseUrl: server.url });
    let done = false;
    const first = await kuko.orders.list().finally(() => (done = true));
    expect({ ids: first.data.map((o) => o.id), done }).toEqual({ ids: ['ord_1'], done: true });
  });

  it('awaits one page with has_more and lastResponse, and sends nothing before it is used', async () => {
    server = await startScriptedServer([page(['rf_2', 'rf_1'], true)]);
    const kuko = new KukoPay(KEY, { baseUrl: server.url });
    const pending = kuko.refunds.list({ order_id: 'ord_1', limit: 2 });
    expect(server.requests).toHaveLength(0);
    const first = await pending;
    expect(first.data.map((r) => r.id)).toEqual(['rf_2', 'rf_1']);
    expect(first.has_more).toBe(true);
    expect(first.lastResponse.status).toBe(200);
    expect(server.requests.map((r) => r.url)).toEqual(['/v1/orders/ord_1/refunds?limit=2']);
  });

  it('maps every method to its route', async () => {
    server = await startScriptedServer((_i, request) =>
      request.url === '/v1/orders'
        ? page([], false)
        : ok({ id: request.url }, request.url.endsWith('redeliver') ? 202 : 200),
    );
    const kuko = new KukoPay(KEY, { baseUrl: server.url });
    const redelivered = await kuko.events.redeliver('evt_1', { idempotencyKey: 'again-1' });
    expect(redelivered.lastResponse.status).toBe(202);
    await kuko.events.retrieve('evt_1');
    await kuko.account.retrieve();
    await kuko.orders.retrieveByOutTradeNo('ORDER 1');
    await kuko.refunds.retrieve('rf_1');
    await kuko.refunds.retrieveByOutRefundNo('RF_1');
    await kuko.refunds.create({ out_trade_no: 'ORDER_1' });
    await kuko.orders.list();
    await kuko.events.listAttempts('evt_1');
    await kuko.account.rollNotificationSecret({ idempotencyKey: 'roll-1' });
    await kuko.testHelpers.orders.pay('ord_1', { idempotencyKey: 'pay-1' });
    await kuko.testHelpers.refunds.succeed('rf_1', { idempotencyKey: 'succeed-1' });
    await kuko.testHelpers.refunds.fail('rf_2', { idempotencyKey: 'fail-1' });
    expect(server.requests.map((r) => `${r.method} ${r.url} ${r.headers['idempotency-key'] ?? '-'}`)).toEqual([
      'POST /v1/events/evt_1/redeliver again-1',
      'GET /v1/events/evt_1 -',
      'GET /v1/account -',
      'GET /v1/orders?out_trade_no=ORDER+1 -',
      'GET /v1/refunds/rf_1 -',
      'GET /v1/refunds?out_refund_no=RF_1 -',
      `POST /v1/refunds ${server.requests[6].headers['idempotency-key']}`,
      'GET /v1/orders -',
      'GET /v1/events/evt_1/attempts -',
      'POST /v1/account/notification_secret/roll roll-1',
      'POST /v1/test_helpers/orders/ord_1/pay pay-1',
      'POST /v1/test_helpers/refunds/rf_1/succeed succeed-1',
      'POST /v1/test_helpers/refunds/rf_2/fail fail-1',
    ]);
    expect(server.requests[6].body.toString()).toBe('{"out_trade_no":"ORDER_1"}');
  });
});

describe('errorFromAnswer', () => {
  const body = { code: 400, error: 'parameter_invalid', message: 'amount must be…', param: 'amount' };

  it('takes the request id from the body when a proxy dropped the header', () => {
    const error = errorFromAnswer({
      status: 400,
      headers: {},
      body: { ...body, type: 'invalid_request_error', request_id: 'req_1' },
      idempotencyKey: null,
    });
    expect(error).toBeInstanceOf(KukoPayInvalidRequestError);
    expect(error.requestId).toBe('req_1');
  });

  it('keeps the code, param and message of a category it does not know, classed by status', () => {
    const answer = (status: number) =>
      errorFromAnswer({ status, headers: {}, body: { ...body, type: 'future_error' }, idempotencyKey: null });
    expect(answer(400)).toBeInstanceOf(KukoPayInvalidRequestError);
    expect(answer(400)).toMatchObject({ code: 'parameter_invalid', param: 'amount', message: 'amount must be…' });
    expect(answer(503)).toBeInstanceOf(KukoPayAPIError);
  });
});
