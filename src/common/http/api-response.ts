/**
 * A complete answer: status, body and the headers that belong to it. Replays re-send one
 * exactly as stored, so the body may already be serialised JSON text.
 */
export class ApiResponse {
  private text: string | undefined;

  constructor(
    readonly status: number,
    readonly body: object | string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  /** The body as the exact JSON text that goes on the wire (and into the key store). */
  get json(): string {
    this.text ??= typeof this.body === 'string' ? this.body : JSON.stringify(this.body);
    return this.text;
  }
}

/** What a controller returns when the status is not the route's default. */
export class WithStatus<T> {
  constructor(
    readonly status: number,
    readonly data: T,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/** A cursor page of a list endpoint. */
export class Page<T> {
  constructor(
    readonly data: T[],
    readonly hasMore: boolean,
  ) {}
}
