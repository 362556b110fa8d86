import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsString } from 'class-validator';
import { Chars } from '../../common/validation/validators';

export class CreateMerchantDto {
  @ApiProperty({ example: 'Acme', minLength: 1, maxLength: 200 })
  @IsDefined()
  @IsString({ message: 'name must be a string' })
  @Chars(1, 200)
  name!: string;
}
