import { ConfigError } from './app-config';
import { loadNotificationConfig, parseRetrySchedule } from './notification-config';

describe('notification settings', () => {
  it('reads delays in ms, s, m and h, bare numbers as seconds', () => {
    expect(parseRetrySchedule('0, 250ms,2,5s,5m,2h')).toEqual([0, 250, 2000, 5000, 300000, 7200000]);
  });

  it('refuses a schedule that goes back in time', () => {
    expect(() => parseRetrySchedule('0,5m,1m')).toThrow(ConfigError);
  });

  it('takes a 32-byte base64 ENCRYPTION_KEY and never echoes a bad one', () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    expect(loadNotificationConfig({ ENCRYPTION_KEY: key }).encryptionKey).toEqual(Buffer.alloc(32, 9));
    const short = { ENCRYPTION_KEY: 'c2VjcmV0LXRvby1zaG9ydA==' };
    expect(() => loadNotificationConfig(short)).toThrow(/^Invalid configuration: ENCRYPTION_KEY must be 32/);
    try {
      loadNotificationConfig({ ENCRYPTION_KEY: 'c2VjcmV0LXRvby1zaG9ydA==' });
    } catch (error) {
      expect((error as Error).message).not.toContain('c2VjcmV0');
    }
  });

  it('switches workers off and private networks on', () => {
    const config = loadNotificationConfig({ NOTIFY_WORKERS: 'off', NOTIFY_ALLOW_PRIVATE_NETWORKS: 'true' });
    expect(config).toMatchObject({ workers: false, allowPrivateNetworks: true });
  });
});
