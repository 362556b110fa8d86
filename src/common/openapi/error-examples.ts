import { ERROR_CATALOG, ErrorCode } from '../errors/error-catalog';

/** What each code's answer looks like, for the examples in /docs. */
const MESSAGES: Partial<Record<ErrorCode, [message: string, param: string | null]>> = {
  parameter_invalid: ['amount must be an integer number of minor units', 'amount'],
  parameter_missing: ['Missing required parameter: subject', 'subject'],
  parameter_unknown: ['Received unknown parameter: amount_cents', 'amount_cents'],
  invalid_json: ['The request body is not valid JSON.', null],
  idempotency_key_invalid: ['The Idempotency-Key must be 1 to 255 printable ASCII characters.', 'Idempotency-Key'],
  idempotency_error: ['This Idempotency-Key was used with a different request body.', 'Idempotency-Key'],
  order_not_paid: ['Only a paid order can be refunded.', 'order_id'],
  order_not_closable: ['Only a pending order can be closed.', 'id'],
  refund_amount_exceeded: ['Only 1990 is still refundable.', 'amount'],
  order_not_payable: ['Only a pending order can be paid; this order is paid.', 'id'],
  refund_not_pending: ['Only a pending refund can be settled; this refund is succeeded.', 'id'],
  event_not_deliverable: ['This event has no notify_url to deliver to.', 'id'],
  webhook_signature_invalid: ['No signature matches.', 'webhook-signature'],
  api_key_missing: ['Send your secret API key in the X-Api-Key header.', 'X-Api-Key'],
  api_key_invalid: ['The API key is not valid, or has been revoked.', 'X-Api-Key'],
  resource_missing: ["No such order: 'ord_00000000000000000000000000000000'", 'id'],
  route_not_found: ['No route matches this method and path.', null],
  idempotency_in_progress: ['A request with this Idempotency-Key is still being processed.', 'Idempotency-Key'],
  payload_too_large: ['The request body is larger than 64 KiB.', null],
  unsupported_media_type: ['A request body must be sent as Content-Type: application/json.', 'Content-Type'],
  internal_error: ['An unexpected error occurred; retry the request with the same Idempotency-Key.', null],
  service_unavailable: [
    'The database is unreachable or the connection to it broke; if the request was already under way it may have been carried out: retry the request with the same Idempotency-Key.',
    null,
  ],
};

export function errorExample(code: ErrorCode) {
  const [message, param] = MESSAGES[code] ?? [`Refused: ${code} (see docs/errors.md).`, null];
  const { status, type } = ERROR_CATALOG[code];
  return { code: status, error: code, type, message, param, request_id: 'req_5f0c6e2b8d9a4c1e9b7a3d2f1e0c4b6a' };
}
