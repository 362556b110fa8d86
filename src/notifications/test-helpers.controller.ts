/**
 * Sandbox helpers (docs/notifications.md, "Test helpers"): with a test key only, settle
 * an order or refund as the provider would. Each builds the provider's event and hands
 * it to the webhook receiver, so it takes exactly the webhook's code path (event row,
 * fulfilment, state change, notification event). A live key gets 404.
 */
import { Controller, Param, Post, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../common/auth/api-key.guard';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { DomainError, notFound } from '../common/errors/domain-error';
import { WithStatus } from '../common/http/api-response';
import { Db } from '../database/db';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ORDER_COLUMNS, OrderRow, toOrderObject } from '../orders/order';
import { REFUND_COLUMNS, RefundRow, toRefundObject } from '../refunds/refund';
import { WebhookReceiver } from '../webhooks/webhook-receiver.service';
import { newEventId } from './event';

/** The provider name recorded on the webhook_events rows the helpers create. */
export const TEST_HELPER_PROVIDER = 'test_helpers';

@ApiTags('test_helpers')
@ApiSecurity('api-key')
@Controller('v1/test_helpers')
@UseGuards(ApiKeyGuard)
export class TestHelpersController {
  constructor(
    private readonly db: Db,
    private readonly receiver: WebhookReceiver,
  ) {}

  /** Pays a pending order: payment.succeeded for its amount and currency. */
  @Post('orders/:id/pay')
  @Idempotent()
  async pay(@Auth() auth: RequestAuth, @Param('id') id: string) {
    const order = await this.order(auth, id);
    const outcome = await this.provider('payment.succeeded', {
      order_id: id,
      amount: Number(order.amount),
      currency: order.currency,
      provider_payment_id: `pay_test_${id.slice(4)}`,
    });
    if (outcome !== 'processed') {
      const message = `Only a pending order can be paid; order ${id} is ${order.status}.`;
      throw new DomainError('order_not_payable', message, 'id');
    }
    return new WithStatus(200, toOrderObject(await this.order(auth, id)));
  }

  @Post('refunds/:id/succeed')
  @Idempotent()
  succeed(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.settle(auth, id, 'refund.succeeded', {});
  }

  @Post('refunds/:id/fail')
  @Idempotent()
  fail(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.settle(auth, id, 'refund.failed', {
      failure_code: 'test_helper',
      failure_message: 'Failed by a test helper',
    });
  }

  private async settle(auth: RequestAuth, id: string, type: string, extra: Record<string, string>) {
    const refund = await this.refund(auth, id);
    const outcome = await this.provider(type, { refund_id: id, ...extra });
    if (outcome !== 'processed') {
      const message = `Only a pending refund can be settled; refund ${id} is ${refund.status}.`;
      throw new DomainError('refund_not_pending', message, 'id');
    }
    return new WithStatus(200, toRefundObject(await this.refund(auth, id)));
  }

  private async provider(type: string, data: Record<string, unknown>): Promise<string> {
    const event = { id: newEventId(), type, created_at: new Date().toISOString(), data };
    const result = await this.receiver.receive(TEST_HELPER_PROVIDER, event);
    return result.duplicate ? 'duplicate' : result.outcome.status;
  }

  private async order(auth: RequestAuth, id: string): Promise<OrderRow> {
    sandboxOnly(auth);
    const row = await this.db.one<OrderRow>(
      `SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, auth.merchantId, auth.environment],
    );
    if (!row) throw notFound('order', id);
    return row;
  }

  private async refund(auth: RequestAuth, id: string): Promise<RefundRow> {
    sandboxOnly(auth);
    const row = await this.db.one<RefundRow>(
      `SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1 AND merchant_id = $2 AND environment = $3`,
      [id, auth.merchantId, auth.environment],
    );
    if (!row) throw notFound('refund', id);
    return row;
  }
}

function sandboxOnly(auth: RequestAuth): void {
  if (auth.environment !== 'test') throw new DomainError('route_not_found', 'Test helpers exist only for test keys.');
}
