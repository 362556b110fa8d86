import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { DomainError } from '../common/errors/domain-error';

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
/** How far webhook-timestamp may be from our clock, either way: the verifier's own tolerance. */
const TOLERANCE_SECONDS = 5 * 60;

/**
 * Standard Webhooks verification over the raw body bytes, with the maintained verifier.
 * Any of the provider's secrets may match (rotation). Returns the webhook id.
 */
export function verifyWebhookSignature(verifiers: readonly Webhook[], raw: Buffer, headers: IncomingHttpHeaders): string {
  const signed: Record<string, string> = {};
  for (const name of HEADERS) {
    const value = headers[name];
    if (typeof value !== 'string' || value === '') throw invalidSignature(`The ${name} header is missing.`);
    signed[name] = value;
  }
  if (!/^\d{1,12}$/.test(signed['webhook-timestamp'])) {
    throw invalidSignature('The webhook-timestamp header must be unix seconds.');
  }
  // Decided here from the parsed value, so the answer never depends on the verifier's wording.
  const skew = Math.floor(Date.now() / 1000) - Number(signed['webhook-timestamp']);
  if (Math.abs(skew) > TOLERANCE_SECONDS) {
    throw invalidSignature('The webhook-timestamp is more than 5 minutes away from our clock.');
  }
  for (const verifier of verifiers) {
    try {
      verifier.verify(raw, signed, { jsonParse: false });
      return signed['webhook-id'];
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  throw invalidSignature('No v1 signature matches the body with any configured secret.');
}

function invalidSignature(message: string): DomainError {
  return new DomainError('webhook_signature_invalid', message, null);
}
