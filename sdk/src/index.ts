import { KukoPay } from './client.ts';

export { KukoPay };
export default KukoPay;
export type { KukoPayOptions } from './client.ts';
export {
  KukoPayAPIError,
  KukoPayAuthenticationError,
  KukoPayConnectionError,
  KukoPayError,
  KukoPayIdempotencyError,
  KukoPayInvalidRequestError,
  KukoPayRateLimitError,
  KukoPaySignatureVerificationError,
} from './errors.ts';
export type { KukoPayErrorType } from './errors.ts';
export { ListRequest } from './list.ts';
export type { Page } from './list.ts';
export type { NotificationHeaders } from './notifications.ts';
export type { LastResponse, PostOptions, RequestOptions, WithLastResponse } from './request-sender.ts';
export type { AccountResource, Events, Orders, Refunds, TestHelpers } from './resources.ts';
export type * from './types.ts';
