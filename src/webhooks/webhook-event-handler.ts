import { DiscoveryService } from '@nestjs/core';
import type { Environment } from '../domain/environment';
import { DomainError } from '../common/errors/domain-error';
import { WebhookEvent } from './webhook-event';

export type EventStatus = 'processed' | 'rejected' | 'ignored';

/** What applying an event did; recorded on its webhook_events row and answered. */
export interface EventOutcome {
  status: EventStatus;
  reason: string | null;
  merchantId?: string;
  environment?: Environment;
  orderId?: string;
  refundId?: string;
}

/**
 * Applies one kind of provider event inside the receiver's transaction, after the event
 * row has been claimed. Throws resource_not_ready when what it refers to does not exist
 * (yet), so that nothing is recorded and the provider's retry applies it later.
 */
export interface WebhookEventHandler {
  readonly types: readonly string[];
  /**
   * The order the event's transaction will lock first, known before the transaction (from
   * the event, or read without a lock), or null: an id of no form this service makes, or
   * no such object yet. Given back to `apply`.
   */
  target(event: WebhookEvent): Promise<EventTarget | null>;
  apply(event: WebhookEvent, provider: string, target: EventTarget | null): Promise<EventOutcome>;
}

/**
 * The order an event is about (for a refund, its refund's order). Deliveries for one
 * order wait for one tenant's share of the write slots (Db.transaction), so those queued
 * on a locked order hold up no other order's. An order's id never changes, nor a refund's
 * order, so reading it needs no lock.
 */
export interface EventTarget {
  orderId: string;
}

/** The write-slot tenant of the deliveries for one order. */
export function orderTenant(target: EventTarget): string {
  return `order:${target.orderId}`;
}

/**
 * Marks a provider class as a WebhookEventHandler. Each feature contributes its own
 * handler this way (orders: payments, refunds: refund results) and the receiver
 * discovers them, so webhooks/ depends on no feature and no feature on another's handler.
 */
export const HandlesWebhookEvents = DiscoveryService.createDecorator<void>();

/**
 * What a handler throws when the event refers to an order or refund that does not exist
 * (yet: its transaction may not have committed). The whole delivery rolls back, event row
 * included, and the provider is told to retry.
 */
export function notReady(what: 'Order' | 'Refund', id: string, param: string): DomainError {
  return new DomainError(
    'resource_not_ready',
    `${what} ${id} does not exist (yet); nothing was recorded, retry later.`,
    param,
    { 'Retry-After': '5' },
  );
}
