import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { KukoPay, KukoPaySignatureVerificationError } from '../src/index.ts';
import type { Event } from '../src/index.ts';
import { ORDER } from './support/scripted-server.ts';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const SECRET = secret();
const OLD_SECRET = secret();

const EVENT = {
  id: 'evt_0123456789abcdef01234567',
  object: 'event',
  type: 'order.paid',
  environment: 'test',
  created_at: '2026-11-30T12:00:00.000Z',
  data: { object: { ...ORDER, status: 'paid', paid_at: '2026-11-30T12:00:00.000Z' } },
};
// Spaces and key order as a sender might write them: only these exact bytes verify.
const RAW =
  `{"id":"${EVENT.id}", "object":"event","type":"order.paid","environment":"test",` +
  `"created_at":"${EVENT.created_at}","data":{"object":${JSON.stringify(EVENT.data.object)}}}`;

/** Headers as the service sends them (webhook-id = the event id), signed now + skewSeconds. */
function signed(body: string, options: { secrets?: string[]; skewSeconds?: number; id?: string } = {}) {
  const at = new Date(Date.now() + (options.skewSeconds ?? 0) * 1000);
  const signatures = (options.secrets ?? [SECRET]).map((s) => new Webhook(s).sign(options.id ?? EVENT.id, at, body));
  return {
    'webhook-id': options.id ?? EVENT.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

const verify = KukoPay.notifications.verify;

describe('KukoPay.notifications.verify', () => {
  it('returns the typed event of a body signed with the secret', () => {
    const event: Event = verify(RAW, signed(RAW), SECRET);
    expect(event).toEqual(EVENT);
    if (event.type === 'order.paid') expect(event.data.object.out_trade_no).toBe(ORDER.out_trade_no);
    else throw new Error('narrowed to the wrong type');
  });

  it.each([
    ['a Buffer', () => Buffer.from(RAW)],
    ['a Uint8Array', () => new TextEncoder().encode(RAW)],
    ['a Uint8Array view into a larger buffer', () => Buffer.from(`xx${RAW}yy`).subarray(2, 2 + Buffer.byteLength(RAW))],
  ])('takes the raw body as %s', (_name, body) => {
    expect(verify(body(), signed(RAW), SECRET).id).toBe(EVENT.id);
  });

  it('takes fetch Headers, and header names in any case', () => {
    expect(verify(RAW, new Headers(signed(RAW)), SECRET).id).toBe(EVENT.id);
    const upper = Object.fromEntries(Object.entries(signed(RAW)).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verify(RAW, upper, SECRET).id).toBe(EVENT.id);
  });

  it('accepts any of several secrets, and a header carrying several signatures (rotation)', () => {
    expect(verify(RAW, signed(RAW, { secrets: [OLD_SECRET] }), [SECRET, OLD_SECRET]).id).toBe(EVENT.id);
    expect(verify(RAW, signed(RAW, { secrets: [OLD_SECRET, SECRET] }), SECRET).id).toBe(EVENT.id);
    const withOtherVersions = signed(RAW);
    const otherVersion = `v2,${randomBytes(32).toString('base64')}`;
    withOtherVersions['webhook-signature'] = `${otherVersion} ${withOtherVersions['webhook-signature']}`;
    expect(verify(RAW, withOtherVersions, SECRET).id).toBe(EVENT.id);
  });

  it('accepts a timestamp 4 minutes away', () => {
    expect(verify(RAW, signed(RAW, { skewSeconds: -240 }), SECRET).id).toBe(EVENT.id);
    expect(verify(RAW, signed(RAW, { skewSeconds: 240 }), SECRET).id).toBe(EVENT.id);
  });

  const reparsed = JSON.stringify(JSON.parse(RAW));
  it.each<[string, () => unknown, RegExp]>([
    ['another secret', () => verify(RAW, signed(RAW, { secrets: [OLD_SECRET] }), SECRET), /No v1 signature/],
    ['one changed byte', () => verify(RAW.replace('2990', '2999'), signed(RAW), SECRET), /No v1 signature/],
    ['the body re-serialised after parsing', () => verify(reparsed, signed(RAW), SECRET), /No v1 signature/],
    ['a timestamp 6 minutes old', () => verify(RAW, signed(RAW, { skewSeconds: -360 }), SECRET), /5 minutes/],
    ['a timestamp 6 minutes ahead', () => verify(RAW, signed(RAW, { skewSeconds: 360 }), SECRET), /5 minutes/],
    [
      'no webhook-signature',
      () => verify(RAW, { ...signed(RAW), 'webhook-signature': undefined }, SECRET),
      /webhook-signature header is missing/,
    ],
    ['no webhook-id', () => verify(RAW, { ...signed(RAW), 'webhook-id': '' }, SECRET), /webhook-id header is missing/],
    [
      'a timestamp that is not unix seconds',
      () => verify(RAW, { ...signed(RAW), 'webhook-timestamp': '2026-11-30' }, SECRET),
      /unix seconds/,
    ],
    [
      'a header sent twice',
      () => verify(RAW, { ...signed(RAW), 'webhook-id': [EVENT.id, 'evt_2'] }, SECRET),
      /more than once/,
    ],
    [
      'a signed body whose id is not the webhook-id',
      () => verify(RAW, signed(RAW, { id: 'evt_other' }), SECRET),
      /differs/,
    ],
    ['a signed body that is not JSON', () => verify('not json', signed('not json'), SECRET), /not JSON/],
    [
      'a signed body that is not an event',
      () => verify('{"id":"x"}', signed('{"id":"x"}'), SECRET),
      /not a KukoPay event/,
    ],
  ])('refuses %s', (_name, attempt, message) => {
    expect(attempt).toThrow(KukoPaySignatureVerificationError);
    expect(attempt).toThrow(message);
  });

  it('tells a programming mistake apart: parsed JSON instead of the raw body, or a malformed secret', () => {
    const parsed: unknown = JSON.parse(RAW);
    expect(() => verify(parsed as string, signed(RAW), SECRET)).toThrow(/raw body/);
    expect(() => verify(RAW, signed(RAW), 'not-a-secret')).toThrow(TypeError);
    expect(() => verify(RAW, signed(RAW), [])).toThrow(TypeError);
    const untyped = verify as (...args: unknown[]) => unknown;
    expect(() => untyped(RAW, signed(RAW), undefined)).toThrow('the whsec_ secret, or an array of them');
    expect(() => untyped(RAW, null, SECRET)).toThrow("the request's headers");
  });

  it('gives the error the signature_verification_error type', () => {
    const error = (() => {
      try {
        verify(RAW, signed(RAW, { secrets: [OLD_SECRET] }), SECRET);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toMatchObject({
      type: 'signature_verification_error',
      name: 'KukoPaySignatureVerificationError',
      status: null,
    });
  });
});
