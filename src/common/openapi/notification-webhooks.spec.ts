import type { OpenAPIObject } from '@nestjs/swagger';
import { addNotificationWebhooks, eventSchemaName, NotificationEventDoc } from './notification-webhooks';

describe('the notification events extension point', () => {
  const SCHEMAS = { schema: 'Event', extendedBy: ['EventWithDelivery'] };
  const EVENTS: NotificationEventDoc[] = [
    { type: 'order.paid', summary: 'An order was paid', objectSchema: 'Order' },
    { type: 'refund.failed', summary: 'A refund failed', objectSchema: 'Refund' },
  ];
  const base = (): OpenAPIObject => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {},
    components: {
      schemas: {
        Event: {
          type: 'object',
          required: ['id', 'type', 'data'],
          properties: {
            id: { type: 'string' },
            type: { type: 'string', enum: ['order.paid', 'refund.failed'] },
            data: { type: 'object' },
          },
        },
        EventWithDelivery: {
          type: 'object',
          description: 'with delivery',
          required: ['id', 'type', 'data', 'delivery'],
          properties: {
            id: { type: 'string' },
            type: { type: 'string', enum: ['order.paid', 'refund.failed'] },
            data: { type: 'object' },
            delivery: { type: 'object' },
          },
        },
      },
    },
  });

  it('adds nothing while no event type is registered', () => {
    const document = base();
    addNotificationWebhooks(document, [], SCHEMAS);
    expect(document.webhooks).toBeUndefined();
  });

  it('lists each registered type under webhooks, signed, with its own schema as the body', () => {
    const document = base();
    addNotificationWebhooks(document, EVENTS, SCHEMAS);
    expect(Object.keys(document.webhooks ?? {})).toEqual(['order.paid', 'refund.failed']);
    const paid = document.webhooks!['order.paid'].post!;
    expect(paid.operationId).toBe('notification_order_paid');
    expect(paid.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderPaidNotification' } } },
    });
    expect((paid.parameters as { name: string }[]).map((p) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
  });

  it('splits the event schema by type, and writes the extended ones as it plus their own fields', () => {
    const document = base();
    addNotificationWebhooks(document, EVENTS, SCHEMAS);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a document read in a test
    const schemas = document.components!.schemas as Record<string, any>;
    expect(schemas.Event).toEqual({
      oneOf: [
        { $ref: '#/components/schemas/OrderPaidNotification' },
        { $ref: '#/components/schemas/RefundFailedNotification' },
      ],
    });
    expect(schemas.RefundFailedNotification.properties.type.enum).toEqual(['refund.failed']);
    expect(schemas.RefundFailedNotification.properties.data.properties.object.$ref).toBe('#/components/schemas/Refund');
    expect(schemas.RefundFailedNotification.required).toEqual(['id', 'type', 'data']);
    expect(schemas.EventWithDelivery).toEqual({
      description: 'with delivery',
      allOf: [
        { $ref: '#/components/schemas/Event' },
        { type: 'object', required: ['delivery'], properties: { delivery: { type: 'object' } } },
      ],
    });
  });

  it('refuses to replace a schema of the same name', () => {
    const document = base();
    document.components!.schemas!.RefundFailedNotification = { type: 'object' };
    expect(() => addNotificationWebhooks(document, EVENTS, SCHEMAS)).toThrow(/RefundFailedNotification/);
  });

  it("names a type's schema after it", () => {
    expect(eventSchemaName('refund.succeeded')).toBe('RefundSucceededNotification');
  });
});
