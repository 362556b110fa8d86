import type { OpenAPIObject, SchemaObject } from '@nestjs/swagger';

/** One outbound notification type (merchant notifications, docs/notifications.md). */
export interface NotificationEventDoc {
  /** The event `type`, e.g. `order.paid`; also the key under `webhooks`. */
  type: string;
  summary: string;
  /** The component schema of the object the event carries (`Order`, `Refund`), already in the document. */
  objectSchema: string;
}

/**
 * How the events are written in the document: `schema` is the component generated for an
 * event of any type, which addNotificationWebhooks splits into one schema per type;
 * `extendedBy` are those generated as that one plus more properties.
 */
export interface NotificationSchemas {
  schema: string;
  extendedBy: readonly string[];
}

const registered: { schemas: NotificationSchemas | null; events: NotificationEventDoc[] } = {
  schemas: null,
  events: [],
};

/**
 * The extension point for the notifications the service sends to merchants' notify_url:
 * the notifications module registers its event types here (with the `Event` schema it
 * adds through ApiExtraModels), and finalizeDocument lists each one under the OpenAPI
 * 3.1 `webhooks`: what the merchant's endpoint receives, signed as Standard Webhooks.
 */
export function registerNotificationEvents(schemas: NotificationSchemas, ...events: NotificationEventDoc[]): void {
  registered.schemas = schemas;
  for (const event of events) {
    const index = registered.events.findIndex((known) => known.type === event.type);
    if (index >= 0) registered.events.splice(index, 1);
    registered.events.push(event);
  }
}

/**
 * `order.paid` → `OrderPaidNotification`: "Notification", as the provider's inbound events
 * are `…Event` (`RefundSucceededEvent` is what the provider sends, not what a merchant gets).
 */
export function eventSchemaName(type: string): string {
  const words = type.split(/[^A-Za-z0-9]+/).map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return `${words.join('')}Notification`;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * One schema per event type, its `type` that one value and its `data.object` that type's
 * object, and the generated schema made the `oneOf` of them, so that a generated client
 * narrows the object by the type without a cast. The schemas generated as the event plus
 * more properties become `allOf` the event and those.
 */
function splitByType(
  document: OpenAPIObject,
  { schema, extendedBy }: NotificationSchemas,
  events: NotificationEventDoc[],
): void {
  const schemas = document.components?.schemas ?? {};
  const generated = schemas[schema] as SchemaObject | undefined;
  if (!generated?.properties) return;
  for (const event of events) {
    const name = eventSchemaName(event.type);
    if (schemas[name]) throw new Error(`the notification schema ${name} would replace another schema of that name`);
    schemas[name] = {
      ...generated,
      description: `${event.summary}: the \`${event.type}\` notification. ${generated.description ?? ''}`.trim(),
      properties: {
        ...generated.properties,
        type: { type: 'string', enum: [event.type], example: event.type },
        data: {
          type: 'object',
          required: ['object'],
          properties: {
            object: {
              ...ref(event.objectSchema),
              description: `The ${event.objectSchema.toLowerCase()} exactly as its GET returned it when the event happened`,
            },
          },
        },
      },
    };
  }
  // No `discriminator`: each branch's `type` is a single value, which is all a client needs
  // to narrow, and generators read one as "every schema that is allOf this one is a
  // subtype named by it" (EventWithDelivery would become an event of type
  // "EventWithDelivery").
  schemas[schema] = {
    description: generated.description,
    oneOf: events.map((event) => ref(eventSchemaName(event.type))),
  };
  for (const name of extendedBy) {
    const extended = schemas[name] as SchemaObject | undefined;
    if (!extended?.properties) continue;
    const more = Object.keys(extended.properties).filter((property) => !(property in generated.properties!));
    schemas[name] = {
      description: extended.description,
      allOf: [
        ref(schema),
        {
          type: 'object',
          required: (extended.required ?? []).filter((property) => more.includes(property)),
          properties: Object.fromEntries(more.map((property) => [property, extended.properties![property]])),
        },
      ],
    };
  }
}

export function addNotificationWebhooks(
  document: OpenAPIObject,
  events = registered.events,
  schemas = registered.schemas,
): void {
  if (events.length === 0 || schemas === null) return;
  splitByType(document, schemas, events);
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
          content: { 'application/json': { schema: ref(eventSchemaName(event.type)) } },
        },
        responses: {
          '200': { description: 'Any 2xx within the timeout marks the event delivered; anything else is retried.' },
        },
      },
    };
  }
}
