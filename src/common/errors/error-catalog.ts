/**
 * Every machine code the API answers, with its HTTP status and category (docs/errors.md).
 * Services throw DomainError with one of these codes; the filter maps it to the wire.
 */
export type ErrorType =
  'invalid_request_error' | 'idempotency_error' | 'authentication_error' | 'rate_limit_error' | 'api_error';

const invalid = (status: number) => ({ status, type: 'invalid_request_error' as const });

export const ERROR_CATALOG = {
  parameter_invalid: invalid(400),
  parameter_missing: invalid(400),
  parameter_unknown: invalid(400),
  invalid_json: invalid(400),
  idempotency_key_invalid: invalid(400),
  idempotency_error: { status: 400, type: 'idempotency_error' },
  order_not_paid: invalid(400),
  order_not_closable: invalid(400),
  refund_amount_exceeded: invalid(400),
  order_not_payable: invalid(400),
  refund_not_pending: invalid(400),
  event_not_deliverable: invalid(400),
  webhook_signature_invalid: invalid(400),
  api_key_missing: { status: 401, type: 'authentication_error' },
  api_key_invalid: { status: 401, type: 'authentication_error' },
  resource_missing: invalid(404),
  route_not_found: invalid(404),
  idempotency_in_progress: { status: 409, type: 'idempotency_error' },
  payload_too_large: invalid(413),
  // Only the reference's static files (GET /docs/…) answer these: the API takes no Range
  // and no conditional request headers.
  precondition_failed: invalid(412),
  range_not_satisfiable: invalid(416),
  malformed_request: invalid(400),
  request_timeout: invalid(408),
  headers_too_large: invalid(431),
  rate_limited: { status: 429, type: 'rate_limit_error' },
  unsupported_media_type: invalid(415),
  internal_error: { status: 500, type: 'api_error' },
  service_unavailable: { status: 503, type: 'api_error' },
  // `designed`: a 5xx that is the service working as designed (docs/operations.md), which
  // the request's log line gives at warn, not error.
  resource_not_ready: { status: 503, type: 'api_error', designed: true },
  webhooks_not_configured: { status: 503, type: 'api_error', designed: true },
} as const satisfies Record<string, { status: number; type: ErrorType; designed?: true }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
