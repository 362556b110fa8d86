/**
 * Secrets at rest: AES-256-GCM under ENCRYPTION_KEY when it is set
 * (`enc:v1:<iv>:<tag>:<ciphertext>`, base64), else the text as it is (docs/notifications.md
 * says so plainly). Notification secrets are kept so, and so is a stored answer that shows
 * one (@Idempotent({ answerHoldsSecret: true })). Both forms can be read whatever the
 * setting, so setting the key later needs no migration of the rows already stored.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

export function sealSecret(secret: string, key: Buffer | null): string {
  if (!key) return secret;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${PREFIX}${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${sealed.toString('base64')}`;
}

export function openSecret(stored: string, key: Buffer | null): string {
  if (!stored.startsWith(PREFIX)) return stored;
  if (!key) throw new Error('a secret is stored encrypted but ENCRYPTION_KEY is not set');
  const [iv, tag, sealed] = stored
    .slice(PREFIX.length)
    .split(':')
    .map((part) => Buffer.from(part, 'base64'));
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
}
