import { Webhook } from 'standardwebhooks';

/** Verifiers per provider name; several per provider while a secret is being rotated. */
export type WebhookSecrets = ReadonlyMap<string, readonly Webhook[]>;

const PROVIDER = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/**
 * Parses `provider=whsec_a whsec_b,other=whsec_c`. Each secret is loaded into the
 * maintained verifier here, so a malformed one fails the boot rather than a delivery.
 */
export function parseWebhookSecrets(raw: string | undefined): WebhookSecrets {
  const secrets = new Map<string, Webhook[]>();
  if (raw === undefined) return secrets;
  for (const [index, entry] of raw.split(',').entries()) {
    const separator = entry.indexOf('=');
    const provider = entry.slice(0, separator).trim();
    if (separator < 0 || !PROVIDER.test(provider)) {
      // Only the entry's position: a mistyped entry may be nothing but a secret.
      throw new Error(`entry #${index + 1} must be provider=whsec_…, with a lower-case provider name`);
    }
    if (secrets.has(provider)) {
      throw new Error(`names provider "${provider}" twice; separate its secrets with spaces instead`);
    }
    const values = entry.slice(separator + 1).trim().split(/\s+/).filter(Boolean);
    if (values.length === 0) throw new Error(`has no secret for provider "${provider}"`);
    secrets.set(provider, values.map((secret, index) => verifierFor(provider, index, secret)));
  }
  return secrets;
}

function verifierFor(provider: string, index: number, secret: string): Webhook {
  // The position, never the secret itself, goes into the message.
  const which = `secret #${index + 1} of provider "${provider}"`;
  if (!SECRET.test(secret)) throw new Error(`${which} must be whsec_ followed by base64`);
  try {
    return new Webhook(secret);
  } catch (error) {
    throw new Error(`${which} is not valid base64 (${(error as Error).message})`);
  }
}
