import { randomBytes } from 'node:crypto';
import type { Environment } from '../domain/environment';
import { sha256 } from '../common/hash';

/** kuko_test_… / kuko_live_… followed by 32 base64url characters (192 random bits). */
export const API_KEY_PATTERN = /^kuko_(test|live)_[A-Za-z0-9_-]{32}$/;

export function generateApiKey(environment: Environment): string {
  return `kuko_${environment}_${randomBytes(24).toString('base64url')}`;
}

/** Keys are stored and looked up as their SHA-256. */
export const hashApiKey = sha256;

export function environmentOf(key: string): Environment | null {
  const match = API_KEY_PATTERN.exec(key);
  return match ? (match[1] as Environment) : null;
}

/** Enough of a key to tell it apart in a list, never enough to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, 'kuko_test_'.length + 4);
}
