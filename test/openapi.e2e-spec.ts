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

  // docs/errors.md: without ADMIN_TOKEN the admin API answers like an unknown route; the
  // document listed its paths all the same.
  it('says nothing of the admin API where ADMIN_TOKEN is not set, and keeps everything else', async () => {
    const full = (await t.http().get('/docs-json').expect(200)).body;
    const without = await startTestApp({ ADMIN_TOKEN: '' }, t.db);
    try {
      const served = (await without.http().get('/docs-json').expect(200)).body;
      const text = JSON.stringify(served);
      expect(text).not.toMatch(/\/v1\/admin|ADMIN_TOKEN|CreateMerchant/i);
      expect(Object.keys(served.paths)).toEqual(
        Object.keys(full.paths).filter((path) => !path.startsWith('/v1/admin/')),
      );
      expect(served.tags.map((tag: { name: string }) => tag.name)).not.toContain('admin');
      expect(Object.keys(served.components.securitySchemes)).toEqual(['api-key']);
      // Every schema still referred to is still there.
      for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
        expect(Object.keys(served.components.schemas)).toContain(name);
      }
      expect(Object.keys(served.components.schemas)).toContain('CreateOrderDto');
      expect(Object.keys(served.components.schemas).length).toBeLessThan(Object.keys(full.components.schemas).length);
    } finally {
      await without.close();
    }
  });

  it('serves the interactive reference at /docs', async () => {
    const response = await t.http().get('/docs').redirects(1);
    expect(response.status).toBe(200);
    expect(response.text).toContain('swagger');
  });
});
