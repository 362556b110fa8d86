import { expectError, expectSuccess } from './support/expect-error';
import { createMerchant, createOrder, postOrder, TestMerchant } from './support/factories';
import { ADMIN_TOKEN, startTestApp, TestApp } from './support/test-app';

describe('the error contract (docs/errors.md)', () => {
  let t: TestApp;
  let merchant: TestMerchant;

  beforeAll(async () => {
    t = await startTestApp();
    merchant = await createMerchant(t);
  });
  afterAll(() => t.close());

  const admin = () => t.http().post('/v1/admin/merchants').set('Authorization', `Bearer ${ADMIN_TOKEN}`);

  it('answers success in the envelope with one request id in header and body', async () => {
    const response = await t.http().get('/v1/account').set('X-Api-Key', merchant.testKey);
    expectSuccess(response, 200);
    expect(response.body.data).toMatchObject({ id: merchant.id, object: 'account', environment: 'test' });
  });

  it('gives every response its own request id', async () => {
    const [a, b] = await Promise.all([t.http().get('/health'), t.http().get('/health')]);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('answers an unknown route with a JSON 404', async () => {
    expectError(await t.http().get('/nowhere'), 404, 'route_not_found');
    expectError(await t.http().post('/v1/nowhere').send({}), 404, 'route_not_found');
    // Whatever its body: the URL is what is wrong.
    const post = (contentType: string, body: string) =>
      t.http().post('/v1/nowhere').set('Content-Type', contentType).send(body);
    expectError(await post('text/plain', 'hello'), 404, 'route_not_found');
    expectError(await post('application/json', '{"a":'), 404, 'route_not_found');
    expectError(await post('text/plain', 'a'.repeat(70_000)), 404, 'route_not_found');
    expectError(await post(';;;', 'hello'), 404, 'route_not_found');
    expectError(await t.http().put('/v1/orders').send({}), 404, 'route_not_found');
  });

  it('answers HEAD like the GET without its body, and other methods a path lacks as no route', async () => {
    const order = await createOrder(t, merchant.testKey);
    const get = await t.http().get(`/v1/orders/${order.id}`).set('X-Api-Key', merchant.testKey);
    const head = await t.http().head(`/v1/orders/${order.id}`).set('X-Api-Key', merchant.testKey);
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.text ?? '').toBe('');
    const unauthenticated = await t.http().head(`/v1/orders/${order.id}`);
    expect(unauthenticated.status).toBe(401);
    for (const method of ['options', 'patch', 'delete'] as const) {
      expectError(await t.http()[method](`/v1/orders/${order.id}`), 404, 'route_not_found');
    }
  });

  it('refuses a body that is not JSON', async () => {
    const response = await admin().set('Content-Type', 'application/json').send('{"name": "Acme",');
    expectError(response, 400, 'invalid_json');
    expect(response.body.message).not.toMatch(/\n\s+at |\.js:|node_modules/);
  });

  it('refuses prototype-poisoning keys as invalid JSON', async () => {
    const response = await admin().set('Content-Type', 'application/json').send('{"name":"A","__proto__":{"x":1}}');
    expectError(response, 400, 'invalid_json');
  });

  it('refuses JSON nested too deeply, instead of overflowing the stack', async () => {
    const deep = `{"name":${'['.repeat(20000)}1${']'.repeat(20000)}}`;
    const response = await admin().set('Content-Type', 'application/json').send(deep);
    expectError(response, 400, 'parameter_invalid', 'name');
    const account = await postOrder(t, merchant.testKey, deep, 'deep');
    expectError(account, 400, 'parameter_invalid', 'name');
  });

  it('refuses strings PostgreSQL cannot store: NUL and unpaired surrogates', async () => {
    const send = (json: string) => admin().set('Content-Type', 'application/json').send(json);
    expectError(await send('{"name":"a\\u0000b"}'), 400, 'parameter_invalid', 'name');
    expectError(await send('{"name":"a\\ud800b"}'), 400, 'parameter_invalid', 'name');
    const order = await t
      .http()
      .post('/v1/orders')
      .set('X-Api-Key', merchant.testKey)
      .set('Content-Type', 'application/json')
      .send('{"out_trade_no":"SURR_1","amount":1,"currency":"USD","subject":"s","metadata":{"a":"\\udc00"}}');
    expectError(order, 400, 'parameter_invalid', 'metadata.a');
    expectError(
      await t.http().get('/v1/orders?starting_after=%00').set('X-Api-Key', merchant.testKey),
      400,
      'parameter_invalid',
      'starting_after',
    );
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const response = await admin().send({ name: 'x'.repeat(70 * 1024) });
    expectError(response, 413, 'payload_too_large');
  });

  it('refuses a write whose body is not application/json with 415', async () => {
    expectError(
      await admin().set('Content-Type', 'text/plain').send('name=Acme'),
      415,
      'unsupported_media_type',
      'Content-Type',
    );
    expectError(
      await admin().set('Content-Type', 'application/x-www-form-urlencoded').send('name=Acme'),
      415,
      'unsupported_media_type',
      'Content-Type',
    );
  });

  // `curl -X POST -d ''` labels its empty body a form; .NET's empty StringContent, text/plain.
  it('takes an empty body of any content type as no body', async () => {
    const order = await createOrder(t, merchant.testKey);
    const close = await t
      .http()
      .post(`/v1/orders/${order.id}/close`)
      .set('X-Api-Key', merchant.testKey)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('');
    expectSuccess(close, 200);
    expect(close.body.data.status).toBe('closed');
    expectError(await admin().set('Content-Type', 'text/plain').send(''), 400, 'parameter_missing', 'name');
  });

  it('needs no content type for a write without a body, whatever one is named', async () => {
    for (const headers of [
      { 'Content-Type': '' },
      { 'Content-Type': 'x' },
      { 'Content-Type': ';' },
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Content-Length': '0' },
      // Framed as chunked, so read, and empty: no body either, whatever type or coding it names.
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Transfer-Encoding': 'chunked' },
      { 'Content-Type': 'x', 'Transfer-Encoding': 'chunked' },
    ]) {
      const order = await createOrder(t, merchant.testKey);
      const close = await t.http().post(`/v1/orders/${order.id}/close`).set('X-Api-Key', merchant.testKey).set(headers);
      expectSuccess(close, 200);
      expect(close.body.data.status).toBe('closed');
    }
    // With a body, the content type decides: one that cannot be read is not application/json.
    expectError(
      await admin().set('Content-Type', ';').send('{"name":"Acme"}'),
      415,
      'unsupported_media_type',
      'Content-Type',
    );
  });

  it('accepts application/json with a charset', async () => {
    const response = await admin().set('Content-Type', 'application/json; charset=utf-8').send('{"name":"Acme"}');
    expectSuccess(response, 201);
  });

  it('names the missing, invalid or unknown field', async () => {
    expectError(await admin().send({}), 400, 'parameter_missing', 'name');
    expectError(await admin().send({ name: 42 }), 400, 'parameter_invalid', 'name');
    expectError(await admin().send({ name: '' }), 400, 'parameter_invalid', 'name');
    expectError(await admin().send({ name: 'Acme', colour: 'red' }), 400, 'parameter_unknown', 'colour');
  });

  it('refuses a JSON body that is not an object', async () => {
    expectError(await admin().send([{ name: 'Acme' }]), 400, 'parameter_invalid', null);
    expectError(await admin().set('Content-Type', 'application/json').send('"Acme"'), 400, 'parameter_invalid', null);
  });

  it('never answers HTML', async () => {
    for (const response of [
      await t.http().get('/v1/orders/../../etc/passwd'),
      await t.http().delete('/v1/account'),
      await t.http().get('/%'),
    ]) {
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body.request_id).toMatch(/^req_/);
    }
  });

  it('turns an unexpected failure into a generic 500 without internals', async () => {
    const other = await startTestApp();
    try {
      const { testKey } = await createMerchant(other);
      await other.db.pool.query('ALTER TABLE merchants RENAME TO merchants_gone');
      const response = await other.http().get('/v1/account').set('X-Api-Key', testKey);
      expectError(response, 500, 'internal_error');
      expect(response.body.type).toBe('api_error');
      expect(response.body.message).not.toMatch(/merchants|relation|SELECT|at /i);
    } finally {
      await other.close();
    }
  });
});
