import { retryPause, shouldStore } from './idempotency-policy';

describe('shouldStore', () => {
  it.each([
    [200, false, true],
    [201, false, true],
    [400, false, true],
    [404, false, true],
    [409, true, false],
    [500, false, false],
    [503, false, false],
  ])('status %i (serialization failure: %s) → stored: %s', (status, serializationFailure, stored) => {
    expect(shouldStore(status, serializationFailure)).toBe(stored);
  });
});

describe('retryPause', () => {
  it('stays within a window that doubles with each attempt', () => {
    expect(retryPause(1, () => 0)).toBe(0);
    expect(retryPause(1, () => 0.999)).toBeLessThan(10);
    expect(retryPause(2, () => 0.999)).toBeLessThan(20);
    expect(retryPause(2, () => 0.5)).toBe(10);
  });
});
