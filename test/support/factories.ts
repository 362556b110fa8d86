import { ADMIN_TOKEN, TestApp } from './test-app';

export interface TestMerchant {
  id: string;
  testKey: string;
  liveKey: string;
}

export async function createMerchant(t: TestApp, name = 'Acme'): Promise<TestMerchant> {
  const response = await t
    .http()
    .post('/v1/admin/merchants')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ name })
    .expect(201);
  const { id, api_keys } = response.body.data;
  return { id, testKey: api_keys.test, liveKey: api_keys.live };
}
