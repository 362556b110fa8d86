import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { RequestAuth } from '../common/auth/request-auth';
import { newId } from '../common/ids';
import { ENVIRONMENTS, Environment } from '../database/environment';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';

export interface CreatedMerchant {
  id: string;
  name: string;
  /** Shown once: only their hashes are stored. */
  api_keys: Record<Environment, string>;
  created_at: string;
}

@Injectable()
export class MerchantsService {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  // withTransaction on the injected host, not @Transactional(): the decorator resolves a
  // process-wide host, which is wrong when two app instances share a process (tests).
  create(name: string): Promise<CreatedMerchant> {
    return this.txHost.withTransaction(() => this.insertMerchant(name));
  }

  private async insertMerchant(name: string): Promise<CreatedMerchant> {
    const id = newId('mch');
    const [merchant] = await this.txHost.tx.query(
      'INSERT INTO merchants (id, name) VALUES ($1, $2) RETURNING created_at',
      [id, name],
    );
    const keys = {} as Record<Environment, string>;
    for (const environment of ENVIRONMENTS) {
      keys[environment] = generateApiKey(environment);
      await this.txHost.tx.query(
        `INSERT INTO api_keys (id, merchant_id, environment, key_hash, key_prefix) VALUES ($1, $2, $3, $4, $5)`,
        [newId('key'), id, environment, hashApiKey(keys[environment]), displayPrefix(keys[environment])],
      );
    }
    return { id, name, api_keys: keys, created_at: new Date(merchant.created_at).toISOString() };
  }

  async getAccount({ merchantId, environment }: RequestAuth) {
    const [merchant] = await this.txHost.tx.query('SELECT id, name, created_at FROM merchants WHERE id = $1', [
      merchantId,
    ]);
    return {
      id: merchant.id,
      object: 'account',
      name: merchant.name,
      environment,
      created_at: new Date(merchant.created_at).toISOString(),
    };
  }

  /**
   * The demo merchant of `npm start`'s first run. Serialised by an advisory lock so that
   * several instances starting together create one.
   */
  createDemoMerchantIfNone(): Promise<CreatedMerchant | null> {
    return this.txHost.withTransaction(async () => {
      await this.txHost.tx.query(`SELECT pg_advisory_xact_lock(hashtext('kukopay:demo-merchant'))`);
      const [{ count }] = await this.txHost.tx.query('SELECT count(*)::int AS count FROM merchants');
      return count === 0 ? this.insertMerchant('Demo merchant') : null;
    });
  }
}
