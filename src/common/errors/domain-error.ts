import { ErrorCode } from './error-catalog';

/**
 * A refusal with a machine code. Thrown by services and guards; never an HttpException,
 * so the code, not the framework, decides the status (see error-catalog.ts).
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers, such as Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string, id: string, param: string | null = 'id') =>
  new DomainError('resource_missing', `No such ${what}: '${id}'`, param);
