import { MAX_JSON_DEPTH, refuseUnstorableJson } from './storable-json';

const refusal = (value: unknown) => {
  const error = refuseUnstorableJson(value);
  return error && { code: error.code, param: error.param };
};

describe('refuseUnstorableJson', () => {
  it('accepts ordinary JSON, paired surrogates included', () => {
    expect(refusal({ a: 'x', b: [1, { c: 'ok 😀 €' }], d: null })).toBeNull();
  });

  it('refuses NUL and unpaired surrogates in values and keys, naming the path', () => {
    expect(refusal({ subject: 'a\u0000b' })).toEqual({ code: 'parameter_invalid', param: 'subject' });
    expect(refusal({ metadata: { a: '\ud800' } })).toEqual({ code: 'parameter_invalid', param: 'metadata.a' });
    expect(refusal({ metadata: { ['\udc00']: 'v' } })).toEqual({ code: 'parameter_invalid', param: 'metadata.\udc00' });
    expect(refusal(['x', 'y\ud83d'])).toEqual({ code: 'parameter_invalid', param: '1' });
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels without recursion`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(refusal({ x: deep })?.code).toBe('parameter_invalid');
    let ok: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) ok = [ok];
    expect(refusal({ x: ok })).toBeNull();
  });
});
