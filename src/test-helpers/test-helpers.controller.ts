/**
 * Sandbox helpers (docs/notifications.md, "Test helpers"): with a test key only, settle
 * an order or refund as the provider would. Each builds the provider's event and hands
 * it to the webhook receiver, so it takes exactly the webhook's code path (event row,
 * fulfilment, state change, notification event); an event that changes nothing is rolled
 * back with its refusal. A live key gets 404.
 */
import { Controller, Param, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequestAuth } from '../common/auth/request-auth';
import { DomainError } from '../common/errors/domain-error';
import { WithStatus } from '../common/http/api-response';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import { ApiIdParam } from '../common/openapi/id-param';
import { Db } from '../database/db';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ApiKeyGuard } from '../merchants/api-key.guard';
import { newEventId } from '../notifications/event';
import { OrderObject } from '../orders/order';
import { OrderSchema } from '../orders/order.schema';
import { OrdersService } from '../orders/orders.service';
import { RefundObject } from '../refunds/refund';
import { RefundSchema } from '../refunds/refund.schema';
import { RefundsService } from '../refunds/refunds.service';
import { WebhookReceiverService } from '../webhooks/webhook-receiver.service';
import { TakesNoBody } from '../common/http/takes-no-body';

/** The provider name recorded on the webhook_events rows the helpers create. */
export const TEST_HELPER_PROVIDER = 'test_helpers';

@ApiStandardErrors('api-key')
@ApiTags('test_helpers')
@ApiErrors('resource_missing', 'route_not_found')
@Controller('v1/test_helpers')
@UseGuards(ApiKeyGuard)
export class TestHelpersController {
  constructor(
    private readonly db: Db,
    private readonly orders: OrdersService,
    private readonly refunds: RefundsService,
    private readonly receiver: WebhookReceiverService,
  ) {}

  /** Pays a pending order: payment.succeeded for its amount and currency. */
  @Post('orders/:id/pay')
  @ApiIdParam('ord')
  @TakesNoBody()
  @Idempotent()
  @ApiOperation({
    operationId: 'payOrder',
    summary: 'Pay a pending order as the provider would (test keys only)',
    description: "The payment webhook's path: fulfilment and order.paid. A live key gets 404 route_not_found.",
  })
  @ApiData(200, OrderSchema, { description: 'The paid order.' })
  @ApiErrors('order_not_payable')
  async pay(@Auth() auth: RequestAuth, @Param('id') id: string) {
    const order = await this.order(auth, id);
    const data = {
      order_id: id,
      amount: order.amount,
      currency: order.currency,
      provider_payment_id: `pay_test_${id.slice(4)}`,
    };
    await this.provider(auth, 'payment.succeeded', data, async () => {
      const now = await this.order(auth, id);
      const message = `Only a pending order can be paid; order ${id} is ${now.status}.`;
      return new DomainError('order_not_payable', message, 'id');
    });
    return new WithStatus(200, await this.order(auth, id));
  }

  @Post('refunds/:id/succeed')
  @ApiIdParam('rf')
  @TakesNoBody()
  @Idempotent()
  @ApiOperation({
    operationId: 'succeedRefund',
    summary: 'Settle a pending refund as succeeded (test keys only)',
    description: "The refund webhook's path: refund.succeeded. A live key gets 404 route_not_found.",
  })
  @ApiData(200, RefundSchema, { description: 'The succeeded refund.' })
  @ApiErrors('refund_not_pending')
  succeed(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.settle(auth, id, 'refund.succeeded', {});
  }

  @Post('refunds/:id/fail')
  @ApiIdParam('rf')
  @TakesNoBody()
  @Idempotent()
  @ApiOperation({
    operationId: 'failRefund',
    summary: 'Settle a pending refund as failed (test keys only)',
    description: "The refund webhook's path: refund.failed. A live key gets 404 route_not_found.",
  })
  @ApiData(200, RefundSchema, { description: 'The failed refund.' })
  @ApiErrors('refund_not_pending')
  fail(@Auth() auth: RequestAuth, @Param('id') id: string) {
    return this.settle(auth, id, 'refund.failed', {
      failure_code: 'test_helper',
      failure_message: 'Failed by a test helper',
    });
  }

  private async settle(auth: RequestAuth, id: string, type: string, extra: Record<string, string>) {
    await this.refund(auth, id);
    await this.provider(auth, type, { refund_id: id, ...extra }, async () => {
      const now = await this.refund(auth, id);
      const message = `Only a pending refund can be settled; refund ${id} is ${now.status}.`;
      return new DomainError('refund_not_pending', message, 'id');
    });
    return new WithStatus(200, await this.refund(auth, id));
  }

  /**
   * The provider's event, received in a transaction of the merchant's that a refusal rolls
   * back: an event that changed nothing (the order or refund was no longer pending) leaves
   * no webhook_events row, as any refused request changes nothing. `refusal` is read
   * inside it, so its message gives the status that refused the event.
   */
  private provider(
    auth: RequestAuth,
    type: string,
    data: Record<string, unknown>,
    refusal: () => Promise<DomainError>,
  ): Promise<void> {
    const event = { id: newEventId(), type, created_at: new Date().toISOString(), data };
    return this.db.transaction(auth.merchantId, async () => {
      // Signed as if by a test secret: it may touch test objects only.
      const result = await this.receiver.receive(TEST_HELPER_PROVIDER, event, new Set(['test'] as const));
      if (result.duplicate || result.outcome.status !== 'processed') throw await refusal();
    });
  }

  private order(auth: RequestAuth, id: string): Promise<OrderObject> {
    sandboxOnly(auth);
    return this.orders.getById(auth, id);
  }

  private refund(auth: RequestAuth, id: string): Promise<RefundObject> {
    sandboxOnly(auth);
    return this.refunds.getById(auth, id);
  }
}

function sandboxOnly(auth: RequestAuth): void {
  if (auth.environment !== 'test') throw new DomainError('route_not_found', 'Test helpers exist only for test keys.');
}
