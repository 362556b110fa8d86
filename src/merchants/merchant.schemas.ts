import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { NotificationSecretsSchema } from './notification-secret.schema';
import { idPattern } from '../common/openapi/id-param';

const MERCHANT_ID = { pattern: idPattern('mch'), example: 'mch_3b8f1e0c2d4a5b6c7d8e9f0a1b2c3d4e' };
const CREATED_AT = { type: 'string', format: 'date-time', example: '2026-09-20T08:00:00.000Z' } as const;

/** Who an API key belongs to (MerchantsService.getAccount). */
@ApiSchema({ name: 'Account', description: 'The merchant and environment of the API key that called.' })
export class AccountSchema {
  @ApiProperty(MERCHANT_ID)
  id!: string;

  @ApiProperty({ enum: ['account'], example: 'account' })
  object!: 'account';

  @ApiProperty({ example: 'Acme' })
  name!: string;

  @ApiProperty({ enum: ['test', 'live'], example: 'test' })
  environment!: 'test' | 'live';

  @ApiProperty(CREATED_AT)
  created_at!: string;
}

@ApiSchema({ name: 'ApiKeys' })
class ApiKeysSchema {
  @ApiProperty({ pattern: '^kuko_test_[A-Za-z0-9_-]{32}$', example: 'kuko_test_Qm9vay1rZXktZXhhbXBsZS0wMDAxAAAA' })
  test!: string;

  @ApiProperty({ pattern: '^kuko_live_[A-Za-z0-9_-]{32}$', example: 'kuko_live_Qm9vay1rZXktZXhhbXBsZS0wMDAyAAAA' })
  live!: string;
}

/** A merchant as the admin API creates it (CreatedMerchant): the keys are shown only here. */
@ApiSchema({ name: 'CreatedMerchant', description: 'A new merchant with its two secret keys, shown once.' })
export class CreatedMerchantSchema {
  @ApiProperty(MERCHANT_ID)
  id!: string;

  @ApiProperty({ example: 'Acme' })
  name!: string;

  @ApiProperty({ type: ApiKeysSchema, description: 'Only their hashes are stored: keep them now' })
  api_keys!: ApiKeysSchema;

  @ApiProperty({ type: NotificationSecretsSchema, description: 'They sign notifications: keep them now' })
  notification_secrets!: NotificationSecretsSchema;

  @ApiProperty(CREATED_AT)
  created_at!: string;
}

/** A rolled key (ApiKeysService.roll): the new key is shown only here. */
@ApiSchema({ name: 'RolledApiKey', description: 'A new secret key, shown once, and when the keys it replaces stop.' })
export class RolledApiKeySchema {
  @ApiProperty({ enum: ['api_key'], example: 'api_key' })
  object!: 'api_key';

  @ApiProperty(MERCHANT_ID)
  merchant_id!: string;

  @ApiProperty({ enum: ['test', 'live'], example: 'live' })
  environment!: 'test' | 'live';

  @ApiProperty({
    pattern: '^kuko_(test|live)_[A-Za-z0-9_-]{32}$',
    example: 'kuko_live_Qm9vay1rZXktZXhhbXBsZS0wMDAzAAAA',
  })
  api_key!: string;

  @ApiProperty(CREATED_AT)
  created_at!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-09-20T09:00:00.000Z' })
  previous_keys_expire_at!: string | null;
}

/** What a revocation stopped (ApiKeysService.revoke). */
@ApiSchema({ name: 'ApiKeyRevocation', description: 'How many keys of the environment stopped working.' })
export class ApiKeyRevocationSchema {
  @ApiProperty({ enum: ['api_key_revocation'], example: 'api_key_revocation' })
  object!: 'api_key_revocation';

  @ApiProperty(MERCHANT_ID)
  merchant_id!: string;

  @ApiProperty({ enum: ['test', 'live'], example: 'live' })
  environment!: 'test' | 'live';

  @ApiProperty({ type: 'integer', minimum: 0, example: 2 })
  revoked!: number;
}
