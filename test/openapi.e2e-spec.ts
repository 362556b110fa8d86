import { startTestApp, TestApp } from './support/test-app';

describe('the OpenAPI document', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('is served as JSON at /docs-json, generated from the DTOs', async () => {
    const response = await t.http().get('/docs-json').expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const { paths, components } = response.body;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/v1/orders',
        '/v1/orders/{id}',
        '/v1/orders/{id}/close',
        '/v1/refunds',
        '/v1/refunds/{id}',
        '/v1/orders/{id}/refunds',
        '/v1/admin/merchants',
      ]),
    );
    expect(components.schemas.CreateOrderDto.properties).toHaveProperty('out_trade_no');
    expect(components.schemas.CreateRefundDto.properties).toHaveProperty('out_refund_no');
    expect(paths['/v1/orders'].post.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
  });

  it('serves the interactive reference at /docs', async () => {
    const response = await t.http().get('/docs').redirects(1);
    expect(response.status).toBe(200);
    expect(response.text).toContain('swagger');
  });
});
