import type { AddressInfo } from 'node:net';
import { KukoPay, KukoPayOptions } from '@kukopay/node';
import { createMerchant, TestMerchant } from '../../support/factories';
import { startTestApp, TestApp } from '../../support/test-app';
import { WEBHOOK_ENV } from '../../support/webhooks';

export interface SdkServer {
  t: TestApp;
  /** Where the application listens, on 127.0.0.1. */
  url: string;
  merchant: TestMerchant;
  /** A client of the merchant's test key; `baseUrl` defaults to the server (pass a proxy's). */
  client(options?: Partial<KukoPayOptions>, apiKey?: string): KukoPay;
  close(): Promise<void>;
}

/**
 * The real application listening on a port of 127.0.0.1 (the client speaks real HTTP
 * through Node's fetch), with the webhook secret so orders can be paid, and one merchant.
 */
export async function startSdkServer(env: Record<string, string> = {}): Promise<SdkServer> {
  const t = await startTestApp({ ...WEBHOOK_ENV, ...env });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const merchant = await createMerchant(t);
  return {
    t,
    url,
    merchant,
    client: (options = {}, apiKey = merchant.testKey) => new KukoPay(apiKey, { baseUrl: url, ...options }),
    close: () => t.close(),
  };
}
