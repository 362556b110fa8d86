import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** `whsec_` and the base64 of 32 random bytes (generateNotificationSecret in notification-secrets.service.ts). */
const SECRET = {
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  example: 'whsec_a3Vrb3BheS1leGFtcGxlLXNlY3JldC1udW1iZXItMDE=',
} as const;

/** A rolled notification secret (NotificationSecretController.roll): shown only here. */
@ApiSchema({
  name: 'NotificationSecret',
  description: "The key's environment's new notification secret, shown once; the previous one signs beside it a day.",
})
export class NotificationSecretSchema {
  @ApiProperty({ enum: ['notification_secret'], example: 'notification_secret' })
  object!: 'notification_secret';

  @ApiProperty({ enum: ['test', 'live'], description: "The API key's environment", example: 'test' })
  environment!: 'test' | 'live';

  @ApiProperty({ ...SECRET, description: 'Verify notifications with it (Standard Webhooks)' })
  secret!: string;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description: 'Until when the previous secret keeps signing beside this one',
    example: '2026-09-22T08:00:00.000Z',
  })
  previous_expires_at!: string;
}

/** The two secrets of a new merchant (MerchantsService.create), shown only there. */
@ApiSchema({ name: 'NotificationSecrets' })
export class NotificationSecretsSchema {
  @ApiProperty(SECRET)
  test!: string;

  @ApiProperty({ ...SECRET, example: 'whsec_a3Vrb3BheS1leGFtcGxlLXNlY3JldC1udW1iZXItMDI=' })
  live!: string;
}
