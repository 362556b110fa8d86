import { ApiProperty, ApiSchema } from '@nestjs/swagger';

const MERCHANT_ID = { pattern: '^mch_[0-9a-f]{32}$', example: 'mch_3b8f1e0c2d4a5b6c7d8e9f0a1b2c3d4e' };
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

  @ApiProperty(CREATED_AT)
  created_at!: string;
}
