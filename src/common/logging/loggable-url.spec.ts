import { loggableUrl } from './loggable-url';

describe('loggableUrl', () => {
  it('keeps a path and the declared query parameters as sent', () => {
    expect(loggableUrl('/v1/orders')).toBe('/v1/orders');
    expect(loggableUrl('/v1/orders?limit=5&starting_after=ord_1')).toBe('/v1/orders?limit=5&starting_after=ord_1');
    expect(loggableUrl('/v1/events?type=order.paid&order_id=ord_2')).toBe('/v1/events?type=order.paid&order_id=ord_2');
  });

  it('redacts the value of an undeclared parameter, and its name when it could be a secret', () => {
    const key = 'kuko_live_Qm9vay1rZXktZXhhbXBsZS0wMDAxAAAA';
    expect(loggableUrl(`/v1/orders?api_key=${key}&limit=5`)).toBe('/v1/orders?api_key=[redacted]&limit=5');
    expect(loggableUrl(`/v1/orders?${key}`)).toBe('/v1/orders?[redacted]');
    expect(loggableUrl('/v1/orders?token')).toBe('/v1/orders?token=[redacted]');
    expect(loggableUrl('/v1/orders?&limit=5')).toBe('/v1/orders?&limit=5');
  });

  it('redacts the userinfo of an absolute-form target, whatever it holds', () => {
    expect(loggableUrl('http://merchant:kuko_live_secret@127.0.0.1:3000/v1/account')).toBe(
      'http://[redacted]@127.0.0.1:3000/v1/account',
    );
    expect(loggableUrl('http://a@b:c@host/v1/orders?limit=1')).toBe('http://[redacted]@host/v1/orders?limit=1');
    expect(loggableUrl('/v1/orders/x@y')).toBe('/v1/orders/x@y');
    expect(loggableUrl('http://host/v1/orders/x@y')).toBe('http://host/v1/orders/x@y');
  });
});
