import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, Max, Min } from 'class-validator';
import { Optional } from '../../common/validation/validators';
import { ENVIRONMENTS, Environment } from '../../domain/environment';

/** The longest grace period of a rolled key: 30 days. */
const MAX_EXPIRES_IN = 30 * 86400;

export class RevokeApiKeysDto {
  @ApiProperty({ enum: ENVIRONMENTS, example: 'live' })
  @IsDefined()
  @IsIn(ENVIRONMENTS, { message: 'environment must be test or live' })
  environment!: Environment;
}

export class RollApiKeyDto extends RevokeApiKeysDto {
  @ApiPropertyOptional({
    description: 'Seconds the keys being replaced keep working (0: they stop at once)',
    type: 'integer',
    minimum: 0,
    maximum: MAX_EXPIRES_IN,
    default: 0,
    example: 3600,
  })
  @Optional()
  @IsInt({ message: 'expires_in must be a whole number of seconds' })
  @Min(0, { message: `expires_in must be from 0 to ${MAX_EXPIRES_IN}` })
  @Max(MAX_EXPIRES_IN, { message: `expires_in must be from 0 to ${MAX_EXPIRES_IN}` })
  expires_in?: number;
}
