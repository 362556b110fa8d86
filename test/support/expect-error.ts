import type { Response } from 'supertest';

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

/** Asserts the error envelope (docs/errors.md), and that header and body share the request id. */
export function expectError(response: Response, status: number, error: string, param: string | null = null): void {
  expect({ status: response.status, error: response.body.error, param: response.body.param }).toEqual({
    status,
    error,
    param,
  });
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(response.body).sort()).toEqual(['code', 'error', 'message', 'param', 'request_id', 'type']);
  expect(response.body.code).toBe(status);
  expect(typeof response.body.message).toBe('string');
  expect(response.body.request_id).toMatch(REQUEST_ID);
  expect(response.headers['x-request-id']).toBe(response.body.request_id);
}

export function expectSuccess(response: Response, status: number): void {
  expect(response.status).toBe(status);
  expect(response.body.request_id).toMatch(REQUEST_ID);
  expect(response.headers['x-request-id']).toBe(response.body.request_id);
}
