import type { Type } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import type { Response } from 'supertest';
import { CreateMerchantDto } from '../src/merchants/dto/create-merchant.dto';
import { ListEventsQuery } from '../src/notifications/dto/list-events.query';
import { CreateOrderDto } from '../src/orders/dto/create-order.dto';
import { ListOrdersQuery } from '../src/orders/dto/list-orders.query';
import { CreateRefundDto } from '../src/refunds/dto/create-refund.dto';
import { FindRefundQuery } from '../src/refunds/dto/find-refund.query';
import { LOGGED_QUERY_PARAMETERS } from '../src/common/logging/loggable-url';
import { PageQuery } from '../src/common/pagination';
import { escapePointer, OpenApiContract } from './support/openapi-contract';
import { startTestApp, TestApp } from './support/test-app';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The operation ids the TypeScript SDK is generated against: renaming one breaks it. */
const OPERATIONS: Record<string, string> = {
  'POST /v1/orders': 'createOrder',
  'GET /v1/orders': 'listOrders',
  'GET /v1/orders/{id}': 'retrieveOrder',
  'POST /v1/orders/{id}/close': 'closeOrder',
  'POST /v1/refunds': 'createRefund',
  'GET /v1/refunds': 'findRefund',
  'GET /v1/refunds/{id}': 'retrieveRefund',
  'GET /v1/orders/{id}/refunds': 'listOrderRefunds',
  'GET /v1/account': 'retrieveAccount',
  'POST /v1/account/notification_secret/roll': 'rollNotificationSecret',
  'GET /v1/events': 'listEvents',
  'GET /v1/events/{id}': 'retrieveEvent',
  'GET /v1/events/{id}/attempts': 'listEventAttempts',
  'POST /v1/events/{id}/redeliver': 'redeliverEvent',
  'POST /v1/test_helpers/orders/{id}/pay': 'payOrder',
  'POST /v1/test_helpers/refunds/{id}/succeed': 'succeedRefund',
  'POST /v1/test_helpers/refunds/{id}/fail': 'failRefund',
  'POST /v1/admin/merchants': 'createMerchant',
  'POST /v1/admin/merchants/{id}/api_keys/roll': 'rollApiKey',
  'POST /v1/admin/merchants/{id}/api_keys/revoke': 'revokeApiKeys',
  'POST /v1/webhooks/{provider}': 'receiveWebhook',
  'GET /health': 'health',
  'GET /health/ready': 'healthReady',
};

/** Lint warnings docs/decisions.md explains; anything else fails. */
const ACCEPTED_WARNINGS = new Set(['operation-4xx-response', 'no-illogical-composition-keywords']);

describe('the OpenAPI document (/docs-json)', () => {
  let t: TestApp;
  let api: OpenApiContract;
  let document: Json;

  beforeAll(async () => {
    t = await startTestApp();
    api = await OpenApiContract.load(t);
    document = api.document;
  });
  afterAll(() => t.close());

  function* operations(): Generator<[string, Json, string]> {
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        yield [`${method.toUpperCase()} ${path}`, operation, `/paths/${escapePointer(path)}/${method}`];
      }
    }
  }

  it('is OpenAPI 3.1 with the stable operation ids, and a summary, tag and security on each', () => {
    expect(document.openapi).toBe('3.1.0');
    const found: Record<string, string> = {};
    for (const [name, operation] of operations()) {
      found[name] = operation.operationId;
      expect({ name, summary: typeof operation.summary, tags: operation.tags?.length }).toEqual({
        name,
        summary: 'string',
        tags: 1,
      });
      expect(Array.isArray(operation.security)).toBe(true);
    }
    expect(found).toEqual(OPERATIONS);
    expect(document.paths['/health'].get.security).toEqual([]);
    expect(document.paths['/v1/webhooks/{provider}'].post.security).toEqual([]);
    expect(document.paths['/v1/orders'].post.security).toEqual([{ 'api-key': [] }]);
    expect(document.components.securitySchemes.admin).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    expect(document.components.securitySchemes.admin.bearerFormat).toBeUndefined();
  });

  it('names the schemas the SDK uses', () => {
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Order',
        'Refund',
        'Account',
        'Error',
        'CreateOrderDto',
        'CreateRefundDto',
        'CreateMerchantDto',
        'Event',
        'EventWithDelivery',
        'EventAttempt',
        'NotificationSecret',
      ]),
    );
    const create = document.paths['/v1/orders'].post;
    expect(create.responses['201'].content['application/json'].schema.properties.data).toEqual({
      $ref: '#/components/schemas/Order',
    });
    expect(create.responses['201'].headers.Location.required).toBe(true);
    expect(create.responses['201'].headers['Idempotent-Replayed']).toBeDefined();
    expect(create.responses['409'].headers['Retry-After'].required).toBe(true);
    expect(create.parameters).toEqual([
      expect.objectContaining({
        name: 'Idempotency-Key',
        in: 'header',
        schema: expect.objectContaining({ minLength: 1, maxLength: 512 }),
      }),
    ]);
  });

  it('declares X-Request-Id on every response, and every error with the Error schema and its codes', () => {
    for (const [name, operation] of operations()) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        expect({ name, status, header: response.headers?.['X-Request-Id'] }).toEqual({
          name,
          status,
          header: { $ref: '#/components/headers/X-Request-Id' },
        });
        if (Number(status) < 400) continue;
        const [shared, narrowed] = response.content['application/json'].schema.allOf;
        expect(shared).toEqual({ $ref: '#/components/schemas/Error' });
        expect(narrowed.properties.error.enum.length).toBeGreaterThan(0);
      }
    }
    const close = document.paths['/v1/orders/{id}/close'].post.responses;
    expect(Object.keys(close)).not.toContain('201');
    expect(close['400'].content['application/json'].schema.allOf[1].properties.error.enum).toContain(
      'order_not_closable',
    );
  });

  it('describes the notifications merchants receive: one schema per type, its object an Order or a Refund', () => {
    const types = {
      'order.paid': ['OrderPaidNotification', 'Order'],
      'order.closed': ['OrderClosedNotification', 'Order'],
      'refund.succeeded': ['RefundSucceededNotification', 'Refund'],
      'refund.failed': ['RefundFailedNotification', 'Refund'],
    };
    expect(Object.keys(document.webhooks)).toEqual(Object.keys(types));
    const { schemas } = document.components;
    for (const [type, [name, object]] of Object.entries(types)) {
      const body = document.webhooks[type].post.requestBody.content['application/json'].schema;
      expect(body).toEqual({ $ref: `#/components/schemas/${name}` });
      expect(schemas[name].properties.type.enum).toEqual([type]);
      expect(schemas[name].properties.data.properties.object.$ref).toBe(`#/components/schemas/${object}`);
      expect(schemas[name].required).toEqual(expect.arrayContaining(['id', 'type', 'data']));
    }
    // The provider's inbound events keep their own schemas.
    expect(schemas.RefundSucceededEvent.properties.data).toEqual({ $ref: '#/components/schemas/RefundSucceededData' });
    expect(schemas.Event.oneOf).toEqual(
      Object.values(types).map(([name]) => ({ $ref: `#/components/schemas/${name}` })),
    );
    expect(schemas.EventWithDelivery.allOf[0]).toEqual({ $ref: '#/components/schemas/Event' });
    expect(schemas.EventWithDelivery.allOf[1].required).toEqual(['delivery']);
    const redeliver = document.paths['/v1/events/{id}/redeliver'].post.responses;
    expect(Object.keys(redeliver)).toContain('202');
    expect(redeliver['400'].content['application/json'].schema.allOf[1].properties.error.enum).toContain(
      'event_not_deliverable',
    );
    expect(schemas.CreatedMerchant.required).toContain('notification_secrets');
  });

  it('forbids unknown fields and requires exactly one refund target', () => {
    const { schemas } = document.components;
    for (const name of ['CreateOrderDto', 'CreateRefundDto', 'CreateMerchantDto'])
      expect(schemas[name].additionalProperties).toBe(false);
    const refundBody = '/components/schemas/CreateRefundDto';
    expect(api.validate(refundBody, { order_id: `ord_${'a'.repeat(32)}` })).toBeNull();
    expect(api.validate(refundBody, { out_trade_no: 'ORDER_1' })).toBeNull();
    expect(api.validate(refundBody, {})).not.toBeNull();
    expect(api.validate(refundBody, { order_id: `ord_${'a'.repeat(32)}`, out_trade_no: 'ORDER_1' })).not.toBeNull();
    expect(schemas.CreateOrderDto.properties.amount.type).toBe('integer');
  });

  it('gives every path id the form of its ids, and says of every integer a request carries that it is digits only', () => {
    const prefixes: Record<string, string> = { orders: 'ord', refunds: 'rf', events: 'evt', merchants: 'mch' };
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      const collection = /\/(\w+)\/\{id\}/.exec(path)?.[1];
      for (const operation of Object.values<Json>(item)) {
        const id = (operation.parameters ?? []).find((each: Json) => each.in === 'path' && each.name === 'id');
        if (!collection) continue;
        expect({ path, pattern: id?.schema.pattern }).toEqual({
          path,
          pattern: `^${prefixes[collection]}_[0-9a-f]{32}$`,
        });
      }
    }
    const { schemas } = document.components;
    const digitsOnly = expect.stringContaining('Written as digits only');
    for (const field of [
      schemas.CreateOrderDto.properties.amount,
      schemas.CreateRefundDto.properties.amount,
      schemas.RollApiKeyDto.properties.expires_in,
      schemas.PaymentSucceededData.properties.amount,
      document.paths['/v1/orders'].get.parameters.find((each: Json) => each.name === 'limit').schema,
    ]) {
      expect(field.description).toEqual(digitsOnly);
    }
    expect(schemas.Order.properties.amount.description).not.toEqual(digitsOnly);
    // The provider's amount is read as a safe integer: the document says where it ends.
    const paid = '/components/schemas/PaymentSucceededData';
    const data = (amount: number) => ({
      order_id: `ord_${'a'.repeat(32)}`,
      amount,
      currency: 'USD',
      provider_payment_id: 'p',
    });
    expect(api.validate(paid, data(Number.MAX_SAFE_INTEGER))).toBeNull();
    expect(api.validate(paid, data(Number.MAX_SAFE_INTEGER + 1))).not.toBeNull();
  });

  it('documents exactly the fields the validation reads (one source)', () => {
    const validated = (dto: Type<unknown>) =>
      [
        ...new Set(
          getMetadataStorage()
            .getTargetValidationMetadatas(dto, '', true, false)
            .map((m) => m.propertyName),
        ),
      ].sort();
    for (const dto of [CreateOrderDto, CreateRefundDto, CreateMerchantDto]) {
      expect({ dto: dto.name, fields: Object.keys(document.components.schemas[dto.name].properties).sort() }).toEqual({
        dto: dto.name,
        fields: validated(dto),
      });
    }
    const query = (path: string) =>
      (document.paths[path].get.parameters as Json[])
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort();
    expect(query('/v1/orders')).toEqual(validated(ListOrdersQuery));
    expect(query('/v1/refunds')).toEqual(validated(FindRefundQuery));
    expect(query('/v1/orders/{id}/refunds')).toEqual(validated(PageQuery));
    expect(query('/v1/events')).toEqual(validated(ListEventsQuery));
  });

  it('declares exactly the query parameters whose values the request log keeps', () => {
    const declared = new Set<string>();
    for (const operations of Object.values(document.paths as Record<string, Record<string, Json>>)) {
      for (const operation of Object.values(operations)) {
        for (const parameter of (operation.parameters ?? []) as Json[]) {
          if (parameter.in === 'query') declared.add(parameter.name as string);
        }
      }
    }
    expect([...declared].sort()).toEqual([...LOGGED_QUERY_PARAMETERS].sort());
  });

  it('has examples that are valid against their schemas', () => {
    let checked = 0;
    const check = (schemaPointer: string, example: unknown, where: string) => {
      checked += 1;
      expect({ where, errors: api.validate(schemaPointer, example) }).toEqual({ where, errors: null });
    };
    for (const [, operation, pointer] of operations()) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
          const at = `${pointer}/responses/${status}/content/${escapePointer(type)}/schema`;
          if (media.example !== undefined) check(at, media.example, at);
          for (const [name, example] of Object.entries<Json>(media.examples ?? {}))
            check(at, example.value, `${at} ${name}`);
        }
      }
      (operation.parameters ?? []).forEach((parameter: Json, index: number) => {
        if (parameter.schema?.example !== undefined)
          check(`${pointer}/parameters/${index}/schema`, parameter.schema.example, pointer);
      });
    }
    for (const [name, schema] of Object.entries<Json>(document.components.schemas)) {
      for (const [property, definition] of Object.entries<Json>(schema.properties ?? {})) {
        const at = `/components/schemas/${name}/properties/${property}`;
        if (definition.example !== undefined) check(at, definition.example, at);
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('passes redocly lint with the recommended rules: no error, only the warnings docs/decisions.md explains', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kuko-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const lint = spawnSync(join(process.cwd(), 'node_modules/.bin/redocly'), ['lint', file, '--format=json'], {
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      });
      const report = JSON.parse(lint.stdout) as {
        totals: { errors: number };
        problems: { ruleId: string; severity: string }[];
      };
      expect(report.totals.errors).toBe(0);
      expect(report.problems.filter((p) => p.severity === 'error' || !ACCEPTED_WARNINGS.has(p.ruleId))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is exported to a file unchanged, without a database (what npm run lint:openapi lints)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kuko-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      const run = spawnSync(process.execPath, ['dist/export-openapi.cli.js', file], {
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(document);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a validator that catches what breaks the document', () => {
    const exchange = { method: 'post' as const, path: '/v1/orders' };
    const answer = (status: number, headers: Record<string, string>, body: object) =>
      ({ status, headers, text: JSON.stringify(body), body }) as unknown as Response;
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const error = { code: 404, error: 'resource_missing', type: 'invalid_request_error', message: 'x', param: null };
    const noRequestId = api.check(
      exchange,
      { 'X-Api-Key': 'k' },
      '{}',
      answer(404, json, { ...error, request_id: 'req_x' }),
    );
    expect(noRequestId.responseViolations.join()).toMatch(/status 404 is not documented/);
    const id = `req_${'a'.repeat(32)}`;
    const missingHeader = api.check(
      exchange,
      {},
      undefined,
      answer(400, json, { ...error, code: 400, error: 'parameter_invalid', request_id: id }),
    );
    expect(missingHeader.responseViolations.join()).toMatch(/documented header X-Request-Id is missing/);
    expect(missingHeader.requestViolations.join()).toMatch(/security requirement not met.*request body is missing/);
    const wrongCode = api.check(
      exchange,
      {},
      undefined,
      answer(400, { ...json, 'x-request-id': id }, { ...error, code: 400, request_id: id }),
    );
    expect(wrongCode.responseViolations.join()).toMatch(/body: .*allowed values/);
    const created = answer(201, { ...json, 'x-request-id': id, 'retry-after': '1' }, { data: {}, request_id: id });
    const violations = api.check(exchange, {}, undefined, created).responseViolations.join();
    expect(violations).toMatch(/documented header Location is missing/);
    expect(violations).toMatch(/header retry-after is not documented/);
    expect(violations).toMatch(/must have required property 'id'/);
  });
});
