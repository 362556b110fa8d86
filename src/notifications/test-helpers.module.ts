import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { TestHelpersController } from './test-helpers.controller';

@Module({ imports: [WebhooksModule], controllers: [TestHelpersController] })
export class TestHelpersModule {}
