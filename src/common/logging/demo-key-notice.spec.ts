import { demoKeyNotice } from './demo-key-notice';

const demo = { id: 'mer_1', testKey: 'kuko_test_Qm9vay1rZXktZXhhbXBsZS0wMDAxAAAA' };

describe('demoKeyNotice', () => {
  it('is one JSON line in the shape of the others when the logs are JSON', () => {
    const text = demoKeyNotice('json', demo, 'http://127.0.0.1:3000');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(text)).toMatchObject({
      level: 'info',
      context: 'Main',
      msg: 'Demo merchant mer_1 created; its test API key is shown only now',
      merchant_id: 'mer_1',
      test_api_key: demo.testKey,
      try: `curl -s http://127.0.0.1:3000/v1/orders -H 'X-Api-Key: ${demo.testKey}'`,
    });
  });

  it('is a block with the key on a line of its own for a terminal', () => {
    const text = demoKeyNotice('pretty', demo, 'http://127.0.0.1:3000');
    expect(text).toContain('Demo merchant mer_1 created. Its test API key (shown only now):');
    expect(text.split('\n')).toContain(`  ${demo.testKey}`);
  });
});
