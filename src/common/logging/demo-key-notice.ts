import type { LogFormat } from '../../config/app-config';

export interface DemoMerchant {
  id: string;
  testKey: string;
}

/**
 * What the first start on the embedded database prints of its demo merchant: the test
 * key, shown only now (only its hash is stored), and a request to try it. A block for a
 * person at a terminal; with LOG_FORMAT=json, one line among the others in their shape,
 * so that a collector reading the logs line by line does not choke on it. Written
 * whatever LOG_LEVEL says: the key is never shown again.
 */
export function demoKeyNotice(format: LogFormat, demo: DemoMerchant, url: string): string {
  const tryIt = `curl -s ${url}/v1/orders -H 'X-Api-Key: ${demo.testKey}'`;
  if (format === 'json') {
    const line = {
      level: 'info',
      time: new Date().toISOString(),
      pid: process.pid,
      context: 'Main',
      msg: `Demo merchant ${demo.id} created; its test API key is shown only now`,
      merchant_id: demo.id,
      test_api_key: demo.testKey,
      try: tryIt,
    };
    return `${JSON.stringify(line)}\n`;
  }
  return `\nDemo merchant ${demo.id} created. Its test API key (shown only now):\n\n  ${demo.testKey}\n\nTry: ${tryIt}\n\n`;
}
