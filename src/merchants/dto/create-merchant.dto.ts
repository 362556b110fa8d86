import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsString, Length } from 'class-validator';

export class CreateMerchantDto {
  @ApiProperty({ example: 'Acme', minLength: 1, maxLength: 200 })
  @IsDefined()
  @IsString({ message: 'name must be a string' })
  @Length(1, 200, { message: 'name must be 1 to 200 characters' })
  name!: string;
}
