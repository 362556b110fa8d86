import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import type { AppConfig } from './config/app-config';
import { AuthModule } from './common/auth/auth.module';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { MerchantsModule } from './merchants/merchants.module';
import { MetricsModule } from './metrics/metrics.module';
import { NotificationsModule } from './notifications/notifications.module';
import { TestHelpersModule } from './test-helpers/test-helpers.module';
import { OrdersModule } from './orders/orders.module';
import { RefundsModule } from './refunds/refunds.module';
import { WebhooksModule } from './webhooks/webhooks.module';

export interface AppModuleOptions {
  config: AppConfig;
  /** The resolved database: DATABASE_URL, or the embedded server's. */
  databaseUrl: string;
}

@Module({})
export class AppModule {
  static forRoot({ config, databaseUrl }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(databaseUrl, config),
        ScheduleModule.forRoot(),
        MetricsModule,
        AuthModule,
        HealthModule,
        MerchantsModule,
        IdempotencyModule,
        OrdersModule,
        RefundsModule,
        WebhooksModule,
        NotificationsModule,
        TestHelpersModule,
      ],
    };
  }
}
