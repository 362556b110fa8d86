import { loggableUrl, urlRedactor } from './loggable-url';

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

  it('redacts an API key or a webhook secret wherever it is in the target, by its form', () => {
    const key = 'kuko_test_plVffuPKrMPN0_6zuX_UPGGgLATreVtV';
    expect(loggableUrl(`/v1/orders/${key}`)).toBe('/v1/orders/kuko_test_[redacted]');
    expect(loggableUrl(`/v1/orders/%ZZ${key}/refunds`)).toBe('/v1/orders/%ZZkuko_test_[redacted]/refunds');
    expect(loggableUrl('/v1/KUKO%5FLIVE%5Fabc%2Ddef')).toBe('/v1/KUKO%5FLIVE%5F[redacted]');
    expect(loggableUrl(`${key}:443`)).toBe('kuko_test_[redacted]:443');
    expect(loggableUrl(`/v1/orders?out_trade_no=${key}&limit=2`)).toBe(
      '/v1/orders?out_trade_no=kuko_test_[redacted]&limit=2',
    );
    expect(loggableUrl('/v1/webhooks/whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe('/v1/webhooks/whsec_[redacted]');
    expect(loggableUrl('/v1/orders/ord_0123456789abcdef0123456789abcdef')).toBe(
      '/v1/orders/ord_0123456789abcdef0123456789abcdef',
    );
  });

  it('redacts the configured tokens wherever they are, as sent or percent-encoded', () => {
    const loggable = urlRedactor(['admin-token-0123456789', 'metrics/token#0123456789']);
    expect(loggable('/v1/admin/merchants/admin-token-0123456789')).toBe('/v1/admin/merchants/[redacted]');
    expect(loggable('/v1/admin/merchants?admin-token-0123456789')).toBe('/v1/admin/merchants?[redacted]');
    expect(loggable('/metrics/metrics%2Ftoken%230123456789')).toBe('/metrics/[redacted]');
    expect(loggable('/v1/admin/merchants?limit=1')).toBe('/v1/admin/merchants?limit=1');
    // A token is matched as text, not as a pattern.
    const dotted = urlRedactor(['tok.en+0123456789(x)']);
    expect(dotted('/v1/tok.en+0123456789(x)/a')).toBe('/v1/[redacted]/a');
    expect(dotted('/v1/tokXen0123456789x/a')).toBe('/v1/tokXen0123456789x/a');
  });
});
