import { createHash } from 'node:crypto';

/** SHA-256 digest: API keys and the admin token are compared as digests, bodies fingerprinted by one. */
export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}
