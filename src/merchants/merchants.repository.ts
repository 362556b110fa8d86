import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';

export interface MerchantRow {
  id: string;
  name: string;
  created_at: Date;
}

/** The merchants table. */
@Injectable()
export class MerchantsRepository {
  constructor(private readonly db: Db) {}

  insert(id: string, name: string): Promise<MerchantRow> {
    return this.db.one<MerchantRow>('INSERT INTO merchants (id, name) VALUES ($1, $2) RETURNING id, name, created_at', [
      id,
      name,
    ]) as Promise<MerchantRow>;
  }

  findById(id: string): Promise<MerchantRow | null> {
    return this.db.one<MerchantRow>('SELECT id, name, created_at FROM merchants WHERE id = $1', [id]);
  }

  /** Locks the merchant for the transaction, so that changes to its keys queue; false if there is none. */
  async lockForUpdate(id: string): Promise<boolean> {
    return (await this.db.lockOne('SELECT 1 FROM merchants WHERE id = $1 FOR UPDATE', [id])) !== null;
  }

  async any(): Promise<boolean> {
    return (await this.db.one('SELECT 1 FROM merchants LIMIT 1')) !== null;
  }
}
