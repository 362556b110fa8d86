import { ConfigError } from './app-config';
import { loadNotificationConfig, parseRetrySchedule } from './notification-config';

describe('notification settings', () => {
  it('reads delays in ms, s, m and h, bare numbers as seconds, each after the attempt before', () => {
    expect(parseRetrySchedule('0, 250ms,2,5s,5m,2h')).toEqual([0, 250, 2250, 7250, 307250, 7507250]);
    expect(parseRetrySchedule('5s,5m,1m')).toEqual([5000, 305000, 365000]);
  });

  it('makes the default schedule last about 28 hours, its two 10h slots ten hours apart', () => {
    const slots = loadNotificationConfig({}).retrySchedule;
    expect(slots).toHaveLength(8);
    expect(slots.at(-1)).toBe(((27 * 60 + 35) * 60 + 5) * 1000);
    expect(slots.at(-1)! - slots.at(-2)!).toBe(10 * 3_600_000);
  });

  it('refuses a schedule longer than 30 days or of more than 50 slots', () => {
    expect(() => parseRetrySchedule('0,700h,21h')).toThrow(/at most 30 days \(got 721 hours\)/);
    expect(parseRetrySchedule('0,700h,20h').at(-1)).toBe(720 * 3_600_000);
    expect(() => parseRetrySchedule(Array(51).fill('1s').join(','))).toThrow(ConfigError);
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
