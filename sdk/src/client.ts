import { verify } from './notifications.ts';
import { checkLimits, RequestSender } from './request-sender.ts';
import { AccountResource, Events, Orders, Refunds, TestHelpers } from './resources.ts';

export interface KukoPayOptions {
  /** Where the API is served, e.g. `https://payments.example.com` (no default: the service is self-hosted). */
  baseUrl: string;
  /** Retries after the first attempt of each call; default 3. */
  maxRetries?: number;
  /** Milliseconds each attempt may take; default 30000. */
  timeoutMs?: number;
}

/**
 * The client: `new KukoPay(apiKey, { baseUrl })`. Every call retries connection errors,
 * timeouts, 409, 429 and 5xx with backoff; every POST is sent with one Idempotency-Key
 * and the same body bytes on every attempt, so a retry never executes twice.
 */
export class KukoPay {
  static readonly notifications = { verify } as const;

  readonly orders: Orders;
  readonly refunds: Refunds;
  readonly events: Events;
  readonly account: AccountResource;
  /** Sandbox only: what the payment provider would do (`testHelpers.orders.pay`, …). */
  readonly testHelpers: TestHelpers;

  constructor(apiKey: string, options: KukoPayOptions) {
    // The whole key, as the server makes them: a stray character (a pasted quote, an
    // accent) would otherwise fail in fetch, on every call, as something else.
    if (typeof apiKey !== 'string' || !/^kuko_(test|live)_[A-Za-z0-9_-]+$/.test(apiKey)) {
      throw new TypeError('The API key is the kuko_test_… or kuko_live_… secret key of your merchant.');
    }
    const maxRetries = options?.maxRetries ?? 3;
    const timeoutMs = options?.timeoutMs ?? 30000;
    checkLimits(maxRetries, timeoutMs);
    checkBaseUrl(options?.baseUrl);
    const sender = new RequestSender(apiKey, { baseUrl: options.baseUrl, maxRetries, timeoutMs });
    this.orders = new Orders(sender);
    this.refunds = new Refunds(sender);
    this.events = new Events(sender);
    this.account = new AccountResource(sender);
    this.testHelpers = new TestHelpers(sender);
  }
}

/** An http(s) URL fetch can send to (it refuses one with a user name or password), that paths can follow. */
function checkBaseUrl(baseUrl: unknown): void {
  let url: URL | null = null;
  try {
    url = typeof baseUrl === 'string' && /^https?:\/\/[^/]/i.test(baseUrl) ? new URL(baseUrl) : null;
  } catch {
    // Not a URL: refused below.
  }
  if (url === null) throw new TypeError('baseUrl must be an http(s) URL.');
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('baseUrl must not hold a user name or password: the API key is the credential.');
  }
  // Every path is appended to it: after a query or a fragment it would land there instead.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(baseUrl as string)) {
    throw new TypeError('baseUrl must be the address the API is served at, without a query or fragment.');
  }
}
