import { Global, Module } from '@nestjs/common';
import { AuthFailureLimiter } from './auth-failure-limiter';

/** What the credential guards share, whichever module their controllers live in. */
@Global()
@Module({ providers: [AuthFailureLimiter], exports: [AuthFailureLimiter] })
export class AuthModule {}
