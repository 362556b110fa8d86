import { Injectable } from '@nestjs/common';
import type { Environment } from '../domain/environment';
import { Db, NamedStatement } from '../database/db';

export interface NewFulfillment {
  id: string;
  merchantId: string;
  environment: Environment;
  orderId: string;
  provider: string;
  eventId: string;
  providerPaymentId: string;
}

/** Unique order_id: a second event id for the same payment fulfils nothing. */
const INSERT_FULFILMENT: NamedStatement = {
  name: 'kuko_insert_fulfilment',
  text: `INSERT INTO fulfillments (id, merchant_id, environment, order_id, provider, event_id, provider_payment_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT ON CONSTRAINT fulfillments_order_id_key DO NOTHING`,
};

/** The fulfillments table. */
@Injectable()
export class FulfillmentsRepository {
  constructor(private readonly db: Db) {}

  async insertOnce(fulfillment: NewFulfillment): Promise<void> {
    await this.db.rows(INSERT_FULFILMENT, [
      fulfillment.id,
      fulfillment.merchantId,
      fulfillment.environment,
      fulfillment.orderId,
      fulfillment.provider,
      fulfillment.eventId,
      fulfillment.providerPaymentId,
    ]);
  }
}
