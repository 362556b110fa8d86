import type { OpenAPIObject } from '@nestjs/swagger';
import { addNotificationWebhooks, NotificationEventDoc } from './notification-webhooks';

describe('the notification events extension point', () => {
  const base = (): OpenAPIObject => ({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} });

  it('adds nothing while no event type is registered', () => {
    const document = base();
    addNotificationWebhooks(document, []);
    expect(document.webhooks).toBeUndefined();
  });

  it('lists each registered type under webhooks, signed, with the event schema as its body', () => {
    const events: NotificationEventDoc[] = [
      { type: 'order.paid', summary: 'An order was paid', schemaName: 'Event' },
      { type: 'refund.failed', summary: 'A refund failed', schemaName: 'Event' },
    ];
    const document = base();
    addNotificationWebhooks(document, events);
    expect(Object.keys(document.webhooks ?? {})).toEqual(['order.paid', 'refund.failed']);
    const paid = document.webhooks!['order.paid'].post!;
    expect(paid.operationId).toBe('notification_order_paid');
    expect(paid.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Event' } } },
    });
    expect((paid.parameters as { name: string }[]).map((p) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
  });
});
