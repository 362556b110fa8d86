import type { IncomingHttpHeaders } from 'node:http';
import { WebhookVerificationError } from 'standardwebhooks';
import type { Environment } from '../domain/environment';
import { DomainError } from '../common/errors/domain-error';
import { utf8Text } from '../common/http/kuko-fastify-adapter';
import type { WebhookSecret } from '../config/webhook-secrets';

const HEADERS = ['id', 'timestamp', 'signature'] as const;
/** How far webhook-timestamp may be from our clock, either way: the verifier's own tolerance. */
const TOLERANCE_SECONDS = 5 * 60;

export interface VerifiedDelivery {
  webhookId: string;
  /** The body's text: its bytes, checked to be UTF-8. */
  text: string;
  /** The environments of every secret whose signature matched: what the event may touch. */
  environments: ReadonlySet<Environment>;
}

/**
 * Standard Webhooks verification over the raw body bytes, with the maintained verifier.
 * The verifier signs the body as a string, UTF-8 encoded, so once the headers and the
 * timestamp have passed, bytes that are not UTF-8 are refused as invalid_json (utf8Text):
 * only for UTF-8 does that encoding give back exactly the bytes sent.
 * Any of the provider's secrets may match (rotation); every secret is tried, so that an
 * event signed with both a test and a live secret may touch both. The `svix-*` header
 * names, which many providers send, are read when the `webhook-*` ones are absent.
 */
export function verifyWebhookSignature(
  secrets: readonly WebhookSecret[],
  raw: Buffer,
  headers: IncomingHttpHeaders,
): VerifiedDelivery {
  const signed: Record<string, string> = {};
  // Each header as the request named it, for `param`: an error names what was sent.
  const sentAs: Record<string, string> = {};
  for (const name of HEADERS) {
    const header =
      headers[`webhook-${name}`] === undefined && headers[`svix-${name}`] !== undefined ? 'svix' : 'webhook';
    sentAs[name] = `${header}-${name}`;
    const value = headers[sentAs[name]];
    if (typeof value !== 'string' || value === '')
      throw invalidSignature(`The webhook-${name} header is missing.`, `webhook-${name}`);
    signed[`webhook-${name}`] = value;
  }
  if (!/^\d{1,12}$/.test(signed['webhook-timestamp'])) {
    throw invalidSignature(`The ${sentAs.timestamp} header must be unix seconds.`, sentAs.timestamp);
  }
  // Decided here from the parsed value, so the answer never depends on the verifier's wording.
  const skew = Math.floor(Date.now() / 1000) - Number(signed['webhook-timestamp']);
  if (Math.abs(skew) > TOLERANCE_SECONDS) {
    throw invalidSignature(`The ${sentAs.timestamp} is more than 5 minutes away from our clock.`, sentAs.timestamp);
  }
  const text = utf8Text(raw, 'The webhook body');
  const environments = new Set<Environment>();
  for (const { verifier, environments: allowed } of secrets) {
    try {
      verifier.verify(text, signed, { jsonParse: false });
      for (const environment of allowed) environments.add(environment);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  if (environments.size === 0) {
    throw invalidSignature('No v1 signature matches the body with any configured secret.', sentAs.signature);
  }
  return { webhookId: signed['webhook-id'], text, environments };
}

/** `param` names the header at fault, as for every other header error. */
function invalidSignature(message: string, header: string): DomainError {
  return new DomainError('webhook_signature_invalid', message, header);
}
