/**
 * One POST of a notification. No redirect is followed (a 3xx is a failed attempt), the
 * whole exchange is bounded by NOTIFY_TIMEOUT_MS, at most 64 KiB of the answer is read
 * and its first 1 KiB kept. An answer is the status and its whole body (or the first
 * 64 KiB of it): a 2xx whose body is cut off (a reset before its Content-Length, a
 * broken chunk) or still arriving at the timeout is a failed attempt, with the status
 * that did arrive recorded beside the error. Unless private networks are allowed, every
 * address the host resolves to is checked when the connection is made, so a name that
 * resolves (or re-resolves) to a private address fails with `destination_forbidden`.
 */
import { Inject, Injectable } from '@nestjs/common';
import { LookupAddress, promises as dns } from 'node:dns';
import http, { IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, LookupFunction } from 'node:net';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { KEEP_LIMIT, keptAnswer } from './kept-answer';
import { isForbiddenAddress } from './ssrf-guard';

const READ_LIMIT = 64 * 1024;

export interface HttpAttempt {
  statusCode: number | null;
  /** null exactly when the attempt delivered: a whole 2xx answer within the timeout. */
  error: string | null;
  durationMs: number;
  responseBody: string | null;
}

/** Resolves a host name to its addresses (replaceable, e.g. by a test's own resolver). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

class DestinationForbidden extends Error {
  readonly code = 'destination_forbidden';
}

@Injectable()
export class NotificationHttpClient {
  resolve: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });
  private readonly lookup: LookupFunction;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.lookup = (hostname, options, callback) => {
      this.resolve(hostname).then(
        (addresses) => {
          const allowed = this.config.notifications.allowPrivateNetworks;
          if (!allowed && (addresses.length === 0 || addresses.some((a) => isForbiddenAddress(a.address)))) {
            callback(new DestinationForbidden(`${hostname} resolves to a forbidden address`), '', 4);
          } else if (options.all) {
            (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
          } else {
            callback(null, addresses[0].address, addresses[0].family);
          }
        },
        (error: NodeJS.ErrnoException) => callback(error, '', 4),
      );
    };
    // The guarded lookup goes with each request (post), where the SSRF check belongs.
    const agentOptions = { keepAlive: true, maxSockets: 50 };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  }

  post(url: string, body: string, headers: Record<string, string>): Promise<HttpAttempt> {
    const started = performance.now();
    const finish = (result: Omit<HttpAttempt, 'durationMs'>): HttpAttempt => ({
      ...result,
      durationMs: Math.round(performance.now() - started),
    });
    return new Promise<HttpAttempt>((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return resolve(finish({ statusCode: null, error: 'invalid_url', responseBody: null }));
      }
      // An IP literal is never looked up, so it is checked here.
      const host = target.hostname.replace(/^\[|\]$/g, '');
      if (!this.config.notifications.allowPrivateNetworks && isIP(host) && isForbiddenAddress(host)) {
        return resolve(finish({ statusCode: null, error: 'destination_forbidden', responseBody: null }));
      }
      const secure = target.protocol === 'https:';
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        lookup: this.lookup,
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      });
      // The answer so far: its status once the headers arrived, and the body's first bytes.
      let statusCode: number | null = null;
      const chunks: Buffer[] = [];
      let settled = false;
      const settle = (error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const responseBody = statusCode === null ? null : keptAnswer(Buffer.concat(chunks));
        resolve(finish({ statusCode, error, responseBody }));
      };
      const fail = (error: string) => {
        settle(error);
        request.destroy();
      };
      const timer = setTimeout(() => fail('timeout'), this.config.notifications.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => fail(errorCode(error)));
      request.on('response', (response: IncomingMessage) => {
        statusCode = response.statusCode ?? 0;
        const ok = statusCode >= 200 && statusCode < 300;
        /** The answer ended: whole (or read to the limit), or cut off before its end. */
        const ended = (whole: boolean) => settle(!ok ? 'unexpected_status' : whole ? null : 'connection_reset');
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          // One byte past the limit is enough to tell whether the cut splits a character.
          if (read <= KEEP_LIMIT) chunks.push(chunk);
          read += chunk.length;
          if (read >= READ_LIMIT) {
            ended(true);
            response.destroy();
          }
        });
        response.on('end', () => ended(true));
        // `complete` is false when the connection ended before the body did.
        response.on('error', () => ended(false));
        response.on('close', () => ended(response.complete));
      });
      request.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function errorCode(error: NodeJS.ErrnoException): string {
  if (error instanceof DestinationForbidden) return 'destination_forbidden';
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'dns_error';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection_reset';
    default:
      return error.code?.startsWith('ERR_TLS') || /certificate|ssl|tls/i.test(error.message)
        ? 'tls_error'
        : 'connection_error';
  }
}
