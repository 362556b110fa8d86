import { newId } from '../ids';

export const REQUEST_ID_HEADER = 'X-Request-Id';

export function newRequestId(): string {
  return newId('req');
}
