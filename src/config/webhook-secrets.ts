import { Webhook } from 'standardwebhooks';
import { ENVIRONMENTS, Environment } from '../domain/environment';
import { strictBase64 } from './env-values';

/** One signing secret of a provider, and the environments whose objects its events may touch. */
export interface WebhookSecret {
  verifier: Webhook;
  environments: readonly Environment[];
}

/** Secrets per provider name; several per provider while one is being rotated. */
export type WebhookSecrets = ReadonlyMap<string, readonly WebhookSecret[]>;

const NAME = /^([a-z0-9][a-z0-9_-]{0,63})(?::(test|live))?$/;
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
/** Standard Webhooks asks for 24 to 64 bytes; a shorter HMAC key is too easy to guess. */
const MIN_SECRET_BYTES = 24;

/**
 * Parses `provider=whsec_a whsec_b,provider:test=whsec_c,other:live=whsec_d`. `provider=`
 * signs events of both environments; `provider:test=` / `provider:live=` only of one
 * (docs/webhooks.md). Each secret is checked and loaded into the maintained verifier
 * here, so a malformed one fails the boot rather than a delivery. Messages name entries
 * and secrets by position only: a mistyped entry may be nothing but a secret.
 */
export function parseWebhookSecrets(raw: string | undefined): WebhookSecrets {
  const secrets = new Map<string, WebhookSecret[]>();
  if (raw === undefined) return secrets;
  const seen = new Set<string>();
  for (const [index, entry] of raw.split(',').entries()) {
    const where = `entry #${index + 1}`;
    if (entry.trim() === '') throw new Error(`${where} is empty; remove the extra comma`);
    const separator = entry.indexOf('=');
    const match = NAME.exec(entry.slice(0, Math.max(separator, 0)).trim());
    if (separator < 0 || !match) {
      throw new Error(
        `${where} must be provider=whsec_… (or provider:test= / provider:live=), with a lower-case provider name`,
      );
    }
    const [name, provider, scope] = match;
    if (seen.has(name)) throw new Error(`${where} names "${name}" twice; separate its secrets with spaces instead`);
    seen.add(name);
    const values = entry
      .slice(separator + 1)
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    if (values.length === 0) throw new Error(`${where} has no secret for "${name}"`);
    const environments = scope ? [scope as Environment] : ENVIRONMENTS;
    const loaded = values.map((secret, position) => ({
      verifier: verifierFor(`${where}, secret #${position + 1} of provider "${provider}"`, secret),
      environments,
    }));
    secrets.set(provider, [...(secrets.get(provider) ?? []), ...loaded]);
  }
  return secrets;
}

function verifierFor(which: string, secret: string): Webhook {
  const match = SECRET.exec(secret);
  if (!match) throw new Error(`${which} must be whsec_ followed by base64`);
  const bytes = strictBase64(match[1]);
  if (!bytes) throw new Error(`${which} is not valid base64`);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new Error(`${which} decodes to ${bytes.length} bytes; at least ${MIN_SECRET_BYTES} are required`);
  }
  return new Webhook(secret);
}

/** `kukopay (test+live), other (live)`, for the start-up line; never a secret. */
export function describeWebhookProviders(secrets: WebhookSecrets): string {
  if (secrets.size === 0) return 'none (WEBHOOK_SECRETS unset)';
  return [...secrets.entries()]
    .map(([provider, list]) => {
      const environments = ENVIRONMENTS.filter((env) => list.some((secret) => secret.environments.includes(env)));
      return `${provider} (${environments.join('+')})`;
    })
    .join(', ');
}
