import { Inject, Injectable } from '@nestjs/common';
import { RequestAuth } from '../common/auth/request-auth';
import { DomainError } from '../common/errors/domain-error';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { notifyUrlProblem } from './ssrf-guard';

/**
 * The notify_url rules that depend on the key's environment (https in live, http also in
 * test) and the destination check of docs/notifications.md, applied where orders and
 * refunds are created. The DTOs check only the URL's form.
 */
@Injectable()
export class NotifyUrlPolicy {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  check(auth: RequestAuth, notifyUrl: string | undefined): void {
    if (notifyUrl === undefined) return;
    const problem = notifyUrlProblem(notifyUrl, auth.environment, this.config.notifications.allowPrivateNetworks);
    if (problem) throw new DomainError('parameter_invalid', problem, 'notify_url');
  }
}
