import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import type { TestApp } from './test-app';

/**
 * A validator of requests and answers built from the served /docs-json: the document as
 * a contract (docs/decisions.md, "The OpenAPI document"). Every exchange sent through
 * `send` is checked against the operation it matches; what the document does not allow
 * (an undocumented status, a body off its schema, a documented required header missing,
 * a replay or retry header the document does not declare) is a violation.
 */
export interface Exchange {
  method: 'get' | 'post';
  path: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as these exact bytes. */
  body?: object | string;
}

export interface Checked {
  response: Response;
  /** Where the request breaks the document (expected for requests the server refuses as malformed). */
  requestViolations: string[];
  /** Where the answer breaks the document: always a failure. */
  responseViolations: string[];
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Headers the server sets only where the document must say so. */
const WATCHED_HEADERS = ['location', 'idempotent-replayed', 'retry-after'];

export class OpenApiContract {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: { method: string; pattern: RegExp; template: string; operation: Json; pointer: string }[] =
    [];

  private constructor(
    readonly document: Json,
    private readonly t: TestApp,
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'doc');
    for (const [template, item] of Object.entries<Json>(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`);
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        if (item[method]) {
          const pointer = `/paths/${escapePointer(template)}/${method}`;
          this.routes.push({ method, pattern, template, operation: item[method], pointer });
        }
      }
    }
    // Static segments win over parameters, as in the router.
    this.routes.sort((a, b) => paramCount(a.template) - paramCount(b.template));
  }

  static async load(t: TestApp): Promise<OpenApiContract> {
    const response = await t.http().get('/docs-json').expect(200);
    return new OpenApiContract(response.body as Json, t);
  }

  /** Sends the request and checks both sides against the document. */
  async send(exchange: Exchange): Promise<Checked> {
    const request = exchange.method === 'get' ? this.t.http().get(exchange.path) : this.t.http().post(exchange.path);
    const headers = { ...exchange.headers };
    if (typeof exchange.body === 'object' && !hasHeader(headers, 'content-type'))
      headers['Content-Type'] = 'application/json';
    for (const [name, value] of Object.entries(headers)) request.set(name, value);
    const raw =
      exchange.body === undefined
        ? undefined
        : typeof exchange.body === 'string'
          ? exchange.body
          : JSON.stringify(exchange.body);
    const response = raw === undefined ? await request : await request.send(raw);
    return this.check(exchange, headers, raw, response);
  }

  check(exchange: Exchange, headers: Record<string, string>, raw: string | undefined, response: Response): Checked {
    const url = new URL(exchange.path, 'http://contract.test');
    const route = this.routes.find((r) => r.method === exchange.method && r.pattern.test(url.pathname));
    if (!route) {
      return {
        response,
        requestViolations: [`no operation for ${exchange.method.toUpperCase()} ${url.pathname}`],
        responseViolations: [],
      };
    }
    const requestViolations = this.checkRequest(route, url, headers, raw);
    const responseViolations = this.checkResponse(route, response).map(
      (v) => `${route.operation.operationId} ${response.status}: ${v}`,
    );
    return { response, requestViolations, responseViolations };
  }

  private checkRequest(
    route: (typeof this.routes)[number],
    url: URL,
    headers: Record<string, string>,
    raw: string | undefined,
  ): string[] {
    const violations: string[] = [];
    const { operation, pointer } = route;
    const security: Json[] = operation.security ?? [];
    if (security.length > 0) {
      const schemes = this.document.components.securitySchemes;
      const satisfied = security.some((requirement) =>
        Object.keys(requirement).every((name) => {
          const scheme = schemes[name];
          if (scheme.type === 'apiKey') return hasHeader(headers, scheme.name);
          return /^Bearer ./.test(headerValue(headers, 'authorization') ?? '');
        }),
      );
      if (!satisfied) violations.push('security requirement not met');
    }
    const pathValues = route.pattern.exec(url.pathname)!.slice(1);
    const pathNames = [...route.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    (operation.parameters ?? []).forEach((parameter: Json, index: number) => {
      let value: string | undefined;
      if (parameter.in === 'path') value = decodeURIComponent(pathValues[pathNames.indexOf(parameter.name)]);
      if (parameter.in === 'query') value = url.searchParams.get(parameter.name) ?? undefined;
      if (parameter.in === 'header') value = headerValue(headers, parameter.name);
      if (value === undefined) {
        if (parameter.required) violations.push(`${parameter.in} parameter ${parameter.name} is missing`);
        return;
      }
      const errors = this.validate(`${pointer}/parameters/${index}/schema`, coerce(value, parameter.schema));
      if (errors) violations.push(`${parameter.in} parameter ${parameter.name}: ${errors}`);
    });
    const requestBody = operation.requestBody;
    if (requestBody && raw === undefined) {
      if (requestBody.required) violations.push('request body is missing');
    } else if (requestBody && raw !== undefined) {
      const type = (headerValue(headers, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (!requestBody.content[type]) {
        violations.push(`request content type ${type || '(none)'} is not documented`);
      } else {
        const body = parseJson(raw);
        if (body === undefined) violations.push('request body is not JSON');
        else {
          const errors = this.validate(`${pointer}/requestBody/content/${escapePointer(type)}/schema`, body);
          if (errors) violations.push(`request body: ${errors}`);
        }
      }
    }
    return violations;
  }

  private checkResponse(route: (typeof this.routes)[number], response: Response): string[] {
    const documented = route.operation.responses[String(response.status)];
    if (!documented) return [`status ${response.status} is not documented`];
    const at = `${route.pointer}/responses/${response.status}`;
    const violations: string[] = [];
    const headers: Json = documented.headers ?? {};
    const declared = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    for (const [name, entry] of Object.entries<Json>(headers)) {
      const header = entry.$ref ? this.resolve(entry.$ref) : entry;
      const value = response.headers[name.toLowerCase()] as string | undefined;
      if (value === undefined) {
        if (header.required) violations.push(`documented header ${name} is missing`);
        continue;
      }
      const schemaAt = entry.$ref ? `${entry.$ref.slice(1)}/schema` : `${at}/headers/${escapePointer(name)}/schema`;
      const errors = this.validate(schemaAt, value);
      if (errors) violations.push(`header ${name}: ${errors}`);
    }
    for (const name of WATCHED_HEADERS) {
      if (response.headers[name] !== undefined && !declared.has(name))
        violations.push(`header ${name} is not documented`);
    }
    const type = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const content: Json | undefined = documented.content;
    if (!content) {
      if (response.text) violations.push('a body was answered where none is documented');
      return violations;
    }
    if (!content[type]) return [...violations, `content type ${type} is not documented`];
    const errors = this.validate(`${at}/content/${escapePointer(type)}/schema`, parseJson(response.text));
    if (errors) violations.push(`body: ${errors}`);
    return violations;
  }

  /** Errors of `value` against the schema at this JSON pointer of the document, or null. */
  validate(pointer: string, value: unknown): string | null {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `doc#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(value)) return null;
    return this.ajv.errorsText(validate.errors, { dataVar: 'value' });
  }

  resolve(ref: string): Json {
    return ref
      .slice(2)
      .split('/')
      .reduce((node: Json, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
  }
}

/** Both sides conform: the usual expectation for every exchange of a walk-through. */
export function expectConforming(checked: Checked): Response {
  expect({ request: checked.requestViolations, response: checked.responseViolations }).toEqual({
    request: [],
    response: [],
  });
  return checked.response;
}

/**
 * The server refused a malformed request, and the document refuses it too (it is as
 * strict as the server); the refusal itself conforms.
 */
export function expectRefusedByBoth(checked: Checked): Response {
  expect(checked.responseViolations).toEqual([]);
  expect(checked.requestViolations).not.toEqual([]);
  return checked.response;
}

export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function paramCount(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return headerValue(headers, name) !== undefined;
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const found = Object.keys(headers).find((key) => key.toLowerCase() === name.toLowerCase());
  return found === undefined ? undefined : headers[found];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Query and header values are strings on the wire; numbers are read as the schema asks. */
function coerce(value: string, schema: Json | undefined): unknown {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}
