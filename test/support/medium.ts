import 'reflect-metadata';
import { DataSource } from 'typeorm';
import type { RequestAuth } from '../../src/common/auth/request-auth';
import { newId } from '../../src/common/ids';
import { dataSourceFor, dbOptions } from '../../src/database/database-setup';
import { Db } from '../../src/database/db';
import { ApiKeysRepository } from '../../src/merchants/api-keys.repository';
import { ApiKeysService } from '../../src/merchants/api-keys.service';
import { MerchantsRepository } from '../../src/merchants/merchants.repository';
import { MerchantsService } from '../../src/merchants/merchants.service';
import { FulfillmentsRepository } from '../../src/orders/fulfillments.repository';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { OrdersService } from '../../src/orders/orders.service';
import { PaymentEventsHandler } from '../../src/orders/payment-events.handler';
import { RefundEventsHandler } from '../../src/refunds/refund-events.handler';
import { RefundsRepository } from '../../src/refunds/refunds.repository';
import { RefundsService } from '../../src/refunds/refunds.service';
import type { WebhookEvent } from '../../src/webhooks/webhook-event';
import type { EventOutcome } from '../../src/webhooks/webhook-event-handler';
import { loadConfig } from '../../src/config/app-config';
import { NotificationSecretsRepository } from '../../src/merchants/notification-secrets.repository';
import { NotificationSecrets } from '../../src/merchants/notification-secrets.service';
import { EventRecorder } from '../../src/notifications/event-recorder.service';
import { EventsRepository } from '../../src/notifications/events.repository';
import { NotifyUrlPolicy } from '../../src/notifications/notify-url.policy';
import { runMigrations } from '../../src/database/migrations';
import { createTestDatabase, databaseEnv, TestDatabase } from './database';

/**
 * The service tier without HTTP (immich's "medium" tests): real services and real
 * repositories on a fresh database of the test run's PostgreSQL, wired by hand. Races
 * between services are cheap to run here hundreds of times.
 */
export interface MediumContext {
  database: TestDatabase;
  db: Db;
  orders: OrdersService;
  ordersRepository: OrdersRepository;
  events: EventRecorder;
  refunds: RefundsService;
  payments: PaymentEventsHandler;
  refundEvents: RefundEventsHandler;
  newMerchant(): Promise<RequestAuth>;
  /** A paid order of `amount` USD. */
  newPaidOrder(auth: RequestAuth, amount: number): Promise<string>;
  /** Runs fn in one transaction, as the interceptor (with a key) and the webhook receiver do. */
  inTransaction<T>(fn: () => Promise<T>): Promise<T>;
  /** A refund event applied as the receiver does: its target read first, then one transaction. */
  settle(event: WebhookEvent): Promise<EventOutcome>;
  close(): Promise<void>;
}

export async function startMedium(): Promise<MediumContext> {
  const database = await createTestDatabase();
  // Through the run's pooler when it has one, as the application would connect.
  const env = databaseEnv(database.url);
  const config = loadConfig(env);
  await runMigrations(config.databaseDirectUrl ?? database.url);
  // Db and its pool as the service builds them (the pooler's mode, its prepared
  // statements, the limits per transaction or on the role), not a copy of that choice.
  const options = dbOptions(database.url, config);
  const dataSource = new DataSource(dataSourceFor(database.url, options));
  await dataSource.initialize();
  const db = new Db(dataSource, options);
  const ordersRepository = new OrdersRepository(db);
  const refundsRepository = new RefundsRepository(db);
  const merchantsRepository = new MerchantsRepository(db);
  const apiKeys = new ApiKeysService(db, new ApiKeysRepository(db), merchantsRepository);
  const secrets = new NotificationSecrets(db, new NotificationSecretsRepository(db), merchantsRepository, config);
  const merchants = new MerchantsService(db, merchantsRepository, apiKeys, secrets);
  const events = new EventRecorder(new EventsRepository(db), config);
  const notifyUrls = new NotifyUrlPolicy(config);
  const orders = new OrdersService(db, ordersRepository, events, notifyUrls);
  const payments = new PaymentEventsHandler(ordersRepository, new FulfillmentsRepository(db), events);
  const refundEvents = new RefundEventsHandler(refundsRepository, ordersRepository, events);
  const inTransaction = <T>(fn: () => Promise<T>) => db.transaction('test', fn);
  let sequence = 0;
  return {
    database,
    db,
    orders,
    ordersRepository,
    events,
    refunds: new RefundsService(db, refundsRepository, ordersRepository, notifyUrls),
    payments,
    refundEvents,
    inTransaction,
    settle: async (refundEvent) => {
      const target = await refundEvents.target(refundEvent);
      return inTransaction(() => refundEvents.apply(refundEvent, 'kukopay', target));
    },
    newMerchant: async () => ({ merchantId: (await merchants.create('Medium')).id, environment: 'test' }),
    newPaidOrder: async (auth, amount) => {
      sequence += 1;
      const { order } = await inTransaction(() =>
        orders.create(auth, { out_trade_no: `MEDIUM_${sequence}`, amount, currency: 'USD', subject: 'Medium' }),
      );
      const payment = { order_id: order.id, amount, currency: 'USD', provider_payment_id: `pay_${sequence}` };
      const paid = await inTransaction(() => payments.apply(event('payment.succeeded', payment), 'kukopay'));
      if (paid.status !== 'processed') throw new Error(`payment not processed: ${paid.reason}`);
      return order.id;
    },
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

/** A provider event as the webhook receiver hands it to a handler. */
export function event(type: string, data: Record<string, unknown>): WebhookEvent {
  return { id: newId('ful').replace('ful_', 'evt_'), type, created_at: new Date().toISOString(), data };
}
