import { ADMIN_TOKEN, TestApp } from './test-app';
import { WEBHOOK_ENV } from './webhooks';

/** An app that delivers at once to receivers on 127.0.0.1, with a compressed schedule. */
export const NOTIFY_ENV = {
  ...WEBHOOK_ENV,
  NOTIFY_WORKERS: 'on',
  NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
  NOTIFY_RETRY_SCHEDULE: '0,300ms,600ms',
  NOTIFY_TIMEOUT_MS: '1000',
};

export interface NotifiedMerchant {
  id: string;
  testKey: string;
  liveKey: string;
  secrets: { test: string; live: string };
}

export async function createNotifiedMerchant(t: TestApp, name = 'Acme'): Promise<NotifiedMerchant> {
  const response = await t
    .http()
    .post('/v1/admin/merchants')
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ name })
    .expect(201);
  const { id, api_keys, notification_secrets } = response.body.data;
  return { id, testKey: api_keys.test, liveKey: api_keys.live, secrets: notification_secrets };
}
