/**
 * The query parameters the API declares (every list and lookup endpoint's): ids, numbers,
 * event types and merchant references, never credentials. Their values are worth a log
 * line; the OpenAPI test checks this list against the document.
 */
export const LOGGED_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'limit',
  'starting_after',
  'out_trade_no',
  'out_refund_no',
  'type',
  'order_id',
]);

const REDACTED = '[redacted]';
/** The scheme and the userinfo of an absolute-form target, up to the last `@` of its authority. */
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/;
/** An undeclared name short and plain enough to be a parameter's name, not a pasted secret. */
const PLAIN_NAME = /^[A-Za-z0-9_.-]{1,32}$/;

/**
 * Credentials by their form, wherever they are: an API key (`kuko_test_…`, `kuko_live_…`)
 * and a Standard Webhooks secret (`whsec_…`, base64, so up to the next character base64
 * has not), their underscores also percent-encoded. The prefix stays, so the line still
 * says which kind was sent.
 */
const CREDENTIALS = String.raw`(kuko(?:_|%5f)(?:test|live)(?:_|%5f))[A-Za-z0-9_%-]+|(whsec(?:_|%5f))[A-Za-z0-9%+/=]+`;

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * How request targets are logged, built once: the path as sent, and of the query string
 * only what the API declares. A confused client sends `?api_key=kuko_live_…` (answered 400
 * `parameter_unknown`); that value, or a key pasted as a name, must not reach the logs.
 * An undeclared parameter keeps its name when it is a plain short one, so the line still
 * says what was sent. The userinfo of an absolute-form target (`http://user:key@host/…`)
 * is redacted too. A credential pasted anywhere else (a key sent as an order id, a
 * secret in a declared parameter) is redacted by its form, and `secrets` (the configured
 * tokens, which have none) wherever they occur, as sent or percent-encoded: one regular
 * expression for all of them.
 */
export function urlRedactor(secrets: readonly string[] = []): (sent: string) => string {
  const forms = [...new Set(secrets.flatMap((secret) => [secret, encodeURIComponent(secret)]))].map(escaped);
  const credentials = new RegExp([...forms.map((form) => `(?:${form})`), CREDENTIALS].join('|'), 'gi');
  const redact = (_: string, key?: string, secret?: string) => `${key ?? secret ?? ''}${REDACTED}`;
  return (sent) => {
    // An absolute-form target (a client behind a forward proxy) may carry user:password@.
    const url = sent.replace(USERINFO, `$1${REDACTED}@`).replace(credentials, redact);
    const start = url.indexOf('?');
    if (start === -1) return url;
    const query = url
      .slice(start + 1)
      .split('&')
      .map((pair) => {
        if (pair === '') return pair;
        const equals = pair.indexOf('=');
        const name = equals === -1 ? pair : pair.slice(0, equals);
        if (LOGGED_QUERY_PARAMETERS.has(name)) return pair;
        return PLAIN_NAME.test(name) ? `${name}=${REDACTED}` : REDACTED;
      });
    return `${url.slice(0, start)}?${query.join('&')}`;
  };
}

/** A target as logged where no token is configured (and in tests). */
export const loggableUrl = urlRedactor();
