import type { FastifyRequest } from 'fastify';
import { Metrics } from '../metrics/metrics';
import { DomainError } from '../errors/domain-error';
import { AuthFailureLimiter } from './auth-failure-limiter';

describe('AuthFailureLimiter', () => {
  let now = 1_000_000;
  beforeEach(() => jest.spyOn(Date, 'now').mockImplementation(() => now));
  afterEach(() => jest.restoreAllMocks());

  const from = (ip: string) => ({ ip }) as FastifyRequest;
  const unauthorised = new DomainError('api_key_invalid', 'no', 'X-Api-Key');

  it('answers 429 from the 21st failure within a minute, with the wait until the window has room', () => {
    const limiter = new AuthFailureLimiter(new Metrics(() => ({ size: 20, total: 0, idle: 0, waiting: 0 })));
    for (let i = 0; i < 20; i++) {
      expect(limiter.refuse(from('10.0.0.1'), unauthorised, 'api_key').code).toBe('api_key_invalid');
      now += 1000;
    }
    // 20 failures at t0 … t0+19 s; now t0+20 s: the oldest leaves the window in 40 s.
    const limited = limiter.refuse(from('10.0.0.1'), unauthorised, 'api_key');
    expect(limited.code).toBe('rate_limited');
    expect(limited.headers['Retry-After']).toBe('40');
    // Another address is not affected.
    expect(limiter.refuse(from('10.0.0.2'), unauthorised, 'admin_token').code).toBe('api_key_invalid');
  });

  it('forgives once the failures are older than a minute', () => {
    const limiter = new AuthFailureLimiter(new Metrics(() => ({ size: 20, total: 0, idle: 0, waiting: 0 })));
    for (let i = 0; i < 21; i++) limiter.refuse(from('10.0.0.1'), unauthorised, 'api_key');
    now += 60_001;
    expect(limiter.refuse(from('10.0.0.1'), unauthorised, 'api_key').code).toBe('api_key_invalid');
  });
});
