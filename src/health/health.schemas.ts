import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'Liveness', description: 'The process answers.' })
export class LivenessSchema {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';
}

@ApiSchema({ name: 'Readiness', description: 'The database answered within a second.' })
export class ReadinessSchema {
  @ApiProperty({ enum: ['ok'], example: 'ok' })
  status!: 'ok';

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', properties: { status: { type: 'string' } } },
    example: { database: { status: 'up' } },
  })
  checks!: Record<string, { status: string }>;
}
