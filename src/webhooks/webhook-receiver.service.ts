/**
 * The webhook receiver (docs/webhooks.md): exactly-once application of provider events.
 *
 * One transaction records the event (claiming the unique (provider, event_id), see its repository)
 * and applies it. A second delivery of the same event, sequential or concurrent, finds
 * the row (or waits for the first to commit) and changes nothing. If applying fails,
 * or the order is not there yet, the transaction rolls back, event row included, so the
 * provider's retry applies it later. Nothing here lives in process memory.
 */
import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DomainError } from '../common/errors/domain-error';
import type { Environment } from '../domain/environment';
import { Db } from '../database/db';
import { applyWithinEnvironments } from './environment-scope';
import { parseWebhookEvent, WebhookEvent } from './webhook-event';
import { EventOutcome, HandlesWebhookEvents, orderTenant, WebhookEventHandler } from './webhook-event-handler';
import { WebhookEventsRepository } from './webhook-events.repository';

export type ReceiveResult = { duplicate: true } | { duplicate: false; outcome: EventOutcome };

@Injectable()
export class WebhookReceiverService implements OnModuleInit {
  private readonly handlers = new Map<string, WebhookEventHandler>();

  constructor(
    private readonly db: Db,
    private readonly events: WebhookEventsRepository,
    private readonly discovery: DiscoveryService,
  ) {}

  /** Collects the handlers that features marked with @HandlesWebhookEvents(). */
  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: HandlesWebhookEvents.KEY })) {
      const handler = wrapper.instance as WebhookEventHandler;
      for (const type of handler.types) {
        if (this.handlers.has(type)) throw new Error(`two webhook event handlers claim ${type}`);
        this.handlers.set(type, handler);
      }
    }
  }

  /**
   * A signed body (its text), parsed and received; `type` null when it was no event. A body
   * refused as no event is still a repeat when its webhook-id was received before: an id
   * names one event, so the repeat is answered duplicate whatever its body
   * (docs/webhooks.md). The lookup is made only for a refused body.
   */
  async receiveSigned(
    provider: string,
    webhookId: string,
    text: string,
    environments: ReadonlySet<Environment>,
  ): Promise<{ type: string | null; result: ReceiveResult }> {
    let event: WebhookEvent;
    try {
      event = parseWebhookEvent(text, webhookId);
    } catch (refusal) {
      if (refusal instanceof DomainError && (await this.events.received(provider, webhookId))) {
        return { type: null, result: { duplicate: true } };
      }
      throw refusal;
    }
    return { type: event.type, result: await this.receive(provider, event, environments) };
  }

  /** `environments`: those of the secrets that signed the event; it may touch no other. */
  async receive(provider: string, event: WebhookEvent, environments: ReadonlySet<Environment>): Promise<ReceiveResult> {
    const handler = this.handlers.get(event.type);
    const target = (await handler?.target(event)) ?? null;
    // The order's share of the write slots, or the provider's own for an event that names
    // no order (an unknown type, a refund that does not exist yet).
    return this.db.transaction(target ? orderTenant(target) : `webhook:${provider}`, async () => {
      if (!(await this.events.claim(provider, event))) return { duplicate: true };
      const outcome: EventOutcome = handler
        ? await applyWithinEnvironments(this.db, environments, () => handler.apply(event, provider, target))
        : { status: 'ignored', reason: `unknown event type ${event.type}` };
      await this.events.recordOutcome(provider, event.id, outcome);
      return { duplicate: false, outcome };
    });
  }
}
