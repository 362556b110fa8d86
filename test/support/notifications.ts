import { WEBHOOK_ENV } from './webhooks';

/** An app that delivers at once to receivers on 127.0.0.1, with a compressed schedule. */
export const NOTIFY_ENV = {
  ...WEBHOOK_ENV,
  NOTIFY_WORKERS: 'on',
  NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true',
  NOTIFY_RETRY_SCHEDULE: '0,300ms,300ms',
  NOTIFY_TIMEOUT_MS: '1000',
};
