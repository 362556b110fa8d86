import 'reflect-metadata';
import { Controller, Get, Post } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { Idempotent } from '../../idempotency/idempotent.decorator';
import { ApiErrors, ApiStandardErrors } from './api-errors.decorator';
import { ApiData } from './api-success.decorator';
import { ErrorSchema } from './error.schema';

type Rendered = Record<
  string,
  { schema: { allOf?: { properties: { error: { enum: string[] } } }[] }; headers: object }
>;

const responsesOf = (handler: object) => Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) as Rendered;
const codes = (handler: object, status: number) => responsesOf(handler)[status].schema.allOf![1].properties.error.enum;

@ApiStandardErrors('api-key')
@ApiErrors('resource_missing')
@Controller('things')
class ThingsController {
  @Post()
  @ApiErrors('order_not_paid')
  @Idempotent()
  @ApiErrors('parameter_missing')
  @ApiData(201, ErrorSchema, { description: 'Created.' })
  create() {}

  @Get(':id')
  get() {}

  notARoute() {}
}

describe('the response decorators', () => {
  const { create, get } = ThingsController.prototype;

  it('merge the codes of one status from every decorator, whatever their order', () => {
    expect(codes(create, 400)).toEqual([
      'idempotency_error',
      'idempotency_key_invalid',
      'invalid_json',
      'malformed_request',
      'order_not_paid',
      'parameter_invalid',
      'parameter_missing',
    ]);
    expect(codes(create, 404)).toEqual(['resource_missing']);
    expect(Object.keys(responsesOf(create)).sort()).toEqual([
      '201',
      '400',
      '401',
      '404',
      '408',
      '409',
      '413',
      '415',
      '429',
      '431',
      '500',
      '503',
    ]);
  });

  it('mark replayable answers of an idempotent route, and only those', () => {
    const headers = (status: number) => Object.keys(responsesOf(create)[status].headers);
    expect(headers(201)).toContain('Idempotent-Replayed');
    expect(headers(400)).toContain('Idempotent-Replayed');
    expect(headers(409)).toEqual(['Retry-After']);
    expect(headers(401)).toEqual([]);
    expect(headers(503)).toEqual(['Retry-After']);
  });

  it('apply class-level codes to every route and none to other methods', () => {
    expect(codes(get, 400)).toEqual(['malformed_request', 'parameter_invalid']);
    expect(codes(get, 404)).toEqual(['resource_missing']);
    expect(Object.keys(responsesOf(get)).sort()).toEqual(['400', '401', '404', '408', '429', '431', '500', '503']);
    expect(Reflect.getMetadata(DECORATORS.API_RESPONSE, ThingsController.prototype.notARoute)).toBeUndefined();
  });
});
