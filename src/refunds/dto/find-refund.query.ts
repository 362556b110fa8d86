import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsString, Matches } from 'class-validator';
import { REFERENCE_PATTERN } from '../../common/validation/validators';

export class FindRefundQuery {
  @ApiProperty({
    description: 'The merchant refund number',
    pattern: REFERENCE_PATTERN.source,
    minLength: 1,
    maxLength: 64,
  })
  @IsDefined()
  @IsString()
  @Matches(REFERENCE_PATTERN, { message: 'out_refund_no must be 1-64 characters of A-Z, a-z, 0-9, _ and -' })
  out_refund_no!: string;
}
