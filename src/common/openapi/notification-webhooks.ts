import type { OpenAPIObject } from '@nestjs/swagger';

/** One outbound notification type (merchant notifications, docs/notifications.md). */
export interface NotificationEventDoc {
  /** The event `type`, e.g. `order.paid`; also the key under `webhooks`. */
  type: string;
  summary: string;
  /** The component schema of the event object (e.g. `Event`), already in the document. */
  schemaName: string;
}

const registered: NotificationEventDoc[] = [];

/**
 * The extension point for the notifications the service sends to merchants' notify_url:
 * the notifications module registers its event types here (with the `Event` schema it
 * adds through ApiExtraModels), and finalizeDocument lists each one under the OpenAPI
 * 3.1 `webhooks`: what the merchant's endpoint receives, signed as Standard Webhooks.
 */
export function registerNotificationEvents(...events: NotificationEventDoc[]): void {
  for (const event of events) {
    const index = registered.findIndex((known) => known.type === event.type);
    if (index >= 0) registered.splice(index, 1);
    registered.push(event);
  }
}

export function addNotificationWebhooks(document: OpenAPIObject, events = registered): void {
  if (events.length === 0) return;
  const signed = (name: string, description: string, pattern?: string) => ({
    name,
    in: 'header' as const,
    required: true,
    description,
    schema: { type: 'string' as const, ...(pattern ? { pattern } : {}) },
  });
  document.webhooks = { ...(document.webhooks ?? {}) };
  for (const event of events) {
    document.webhooks[event.type] = {
      post: {
        operationId: `notification_${event.type.replace(/\W/g, '_')}`,
        summary: event.summary,
        tags: ['notifications'],
        security: [],
        parameters: [
          signed('webhook-id', 'The event id, the same on every attempt: deduplicate on it'),
          signed('webhook-timestamp', 'Unix seconds of this attempt', '^[0-9]+$'),
          signed('webhook-signature', 'v1,<base64 HMAC-SHA256> with your notification secret'),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${event.schemaName}` } } },
        },
        responses: {
          '200': { description: 'Any 2xx within the timeout marks the event delivered; anything else is retried.' },
        },
      },
    };
  }
}
