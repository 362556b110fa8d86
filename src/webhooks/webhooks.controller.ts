import { Controller, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../common/errors/domain-error';
import { WithStatus } from '../common/http/api-response';
import { addLogFields } from '../common/logging/request-logging';
import { ApiErrors, ApiStandardErrors } from '../common/openapi/api-errors.decorator';
import { ApiData } from '../common/openapi/api-success.decorator';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ApiProviderEvent, WebhookReceiptSchema } from './webhook.schemas';
import { WebhookReceiverService } from './webhook-receiver.service';
import { verifyWebhookSignature } from './webhook-signature';

/** Seconds a provider should wait while webhooks are not configured (docs/webhooks.md). */
const NOT_CONFIGURED_RETRY_AFTER = '60';

/**
 * Provider webhooks. No API key and no Idempotency-Key: the signature authenticates, the
 * event id deduplicates. The body is verified as sent (its UTF-8 text, which is exactly
 * its bytes) before it is parsed.
 */
@ApiStandardErrors('public')
@ApiTags('webhooks')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(
    private readonly receiver: WebhookReceiverService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post(':provider')
  @ApiOperation({
    operationId: 'receiveWebhook',
    summary: "Receive the payment provider's signed event",
    description: 'Standard Webhooks signature over the raw body; deduplicated by event id (docs/webhooks.md).',
  })
  @ApiProviderEvent()
  @ApiData(200, WebhookReceiptSchema, { description: 'Received: applied, rejected, ignored or a duplicate.' })
  @ApiErrors('webhook_signature_invalid', 'parameter_invalid', 'resource_missing')
  @ApiErrors('resource_not_ready', 'webhooks_not_configured')
  async receive(@Param('provider') provider: string, @Req() request: FastifyRequest) {
    if (this.config.webhookSecrets.size === 0) {
      // Every 503 says when to retry; this one lasts until an operator sets WEBHOOK_SECRETS.
      throw new DomainError('webhooks_not_configured', 'No webhook secrets are configured (WEBHOOK_SECRETS).', null, {
        'Retry-After': NOT_CONFIGURED_RETRY_AFTER,
      });
    }
    const verifiers = this.config.webhookSecrets.get(provider);
    if (!verifiers) throw new DomainError('resource_missing', `No webhook provider named '${provider}'.`, 'provider');

    const raw = request.rawBody ?? Buffer.alloc(0);
    const { webhookId, text, environments } = verifyWebhookSignature(verifiers, raw, request.headers);
    const { type, result } = await this.receiver.receiveSigned(provider, webhookId, text, environments);

    addLogFields(request, {
      webhook_provider: provider,
      webhook_event_id: webhookId,
      webhook_event_type: type,
      webhook_outcome: result.duplicate ? 'duplicate' : result.outcome.status,
    });
    return new WithStatus(
      200,
      result.duplicate
        ? { received: true, duplicate: true }
        : { received: true, duplicate: false, status: result.outcome.status },
    );
  }
}
