import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KukoPay } from '@kukopay/node';

const ROOT = join(__dirname, '..', '..');
const EXPORT = join(ROOT, 'dist', 'export-openapi.cli.js');

type Call = (kuko: KukoPay) => PromiseLike<unknown>;

/**
 * One call of every client method. The first test checks this list against the methods
 * the client has, the second the routes they reach against the document, so a merchant
 * operation added to the API without a method (or a method without its call here) fails.
 */
const CALLS: Record<string, Call> = {
  'orders.create': (k) => k.orders.create({ out_trade_no: 'O_1', amount: 100, currency: 'USD', subject: 'S' }),
  'orders.retrieve': (k) => k.orders.retrieve('ord_1'),
  'orders.retrieveByOutTradeNo': (k) => k.orders.retrieveByOutTradeNo('O_1'),
  'orders.list': (k) => k.orders.list(),
  'orders.close': (k) => k.orders.close('ord_1'),
  'refunds.create': (k) => k.refunds.create({ out_trade_no: 'O_1' }),
  'refunds.retrieve': (k) => k.refunds.retrieve('rf_1'),
  'refunds.retrieveByOutRefundNo': (k) => k.refunds.retrieveByOutRefundNo('R_1'),
  'refunds.list': (k) => k.refunds.list({ order_id: 'ord_1' }),
  'events.retrieve': (k) => k.events.retrieve('evt_1'),
  'events.list': (k) => k.events.list(),
  'events.redeliver': (k) => k.events.redeliver('evt_1'),
  'events.listAttempts': (k) => k.events.listAttempts('evt_1'),
  'account.retrieve': (k) => k.account.retrieve(),
  'account.rollNotificationSecret': (k) => k.account.rollNotificationSecret(),
  'testHelpers.orders.pay': (k) => k.testHelpers.orders.pay('ord_1'),
  'testHelpers.refunds.succeed': (k) => k.testHelpers.refunds.succeed('rf_1'),
  'testHelpers.refunds.fail': (k) => k.testHelpers.refunds.fail('rf_1'),
};

/** Every method of the client, by the path a merchant calls it with (`testHelpers.orders.pay`). */
function clientMethods(kuko: KukoPay): string[] {
  const names: string[] = [];
  const walk = (object: object, prefix: string) => {
    const prototype = Object.getPrototypeOf(object) as object;
    const own = prototype === Object.prototype ? [] : Object.getOwnPropertyNames(prototype);
    for (const name of [...own, ...Object.keys(object)]) {
      if (name === 'constructor' || name === 'sender') continue;
      const member = (object as Record<string, unknown>)[name];
      if (typeof member === 'function') names.push(`${prefix}${name}`);
      else if (typeof member === 'object' && member !== null) walk(member, `${prefix}${name}.`);
    }
  };
  walk(kuko, '');
  return names.sort();
}

describe('the client covers every merchant operation of the OpenAPI document', () => {
  const dir = join(ROOT, '.data', `sdk-coverage-${process.pid}`);
  let document: { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> };
  let server: Server;
  let baseUrl: string;
  const reached: string[] = [];

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    await promisify(execFile)(process.execPath, [EXPORT, join(dir, 'openapi.json')], { cwd: ROOT });
    document = JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8'));
    server = createServer((request, response) => {
      reached.push(`${request.method} ${new URL(request.url ?? '/', 'http://x').pathname}`);
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ data: [], has_more: false }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await new Promise((resolve) => server.close(resolve));
  });

  it('has one call here for each method of the client', () => {
    expect(Object.keys(CALLS).sort()).toEqual(clientMethods(new KukoPay('kuko_test_x', { baseUrl: 'http://x' })));
  });

  it("reaches every operation a merchant's API key may call, and nothing else", async () => {
    const kuko = new KukoPay('kuko_test_x', { baseUrl, maxRetries: 0 });
    for (const call of Object.values(CALLS)) await call(kuko);

    // The merchant's operations: those the document secures with the API key (not the
    // admin API, health, metrics or the provider's webhooks).
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.security?.some((scheme) => 'api-key' in scheme))
        .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
    );
    const template = (request: string) =>
      operations.find(({ route }) => new RegExp(`^${route.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(request))?.route ??
      `${request} (in no operation of the document)`;
    expect([...new Set(reached.map(template))].sort()).toEqual(operations.map(({ route }) => route).sort());
  });
});
