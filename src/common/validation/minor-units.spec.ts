import type { Type } from '@nestjs/common';
import 'reflect-metadata';
import { CreateOrderDto } from '../../orders/dto/create-order.dto';
import { CreateRefundDto } from '../../refunds/dto/create-refund.dto';
import { DomainError } from '../errors/domain-error';
import { createValidationPipe } from '../http/validation.pipe';

const order = { out_trade_no: 'ORDER_1', currency: 'USD', subject: 'Annual plan' };

async function refusal(metatype: Type<unknown>, body: object): Promise<DomainError> {
  try {
    await createValidationPipe().transform(body, { type: 'body', metatype: metatype as never });
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('the body was accepted');
}

describe('amount in integer minor units', () => {
  it.each([['abc'], ['2990'], [true], [1.5], [[1]], [{}]])('refuses %p as not an integer', async (amount) => {
    for (const [dto, body] of [
      [CreateOrderDto, { ...order, amount }],
      [CreateRefundDto, { order_id: `ord_${'0'.repeat(32)}`, amount }],
    ] as const) {
      const error = await refusal(dto, body);
      expect({ code: error.code, param: error.param, message: error.message }).toEqual({
        code: 'parameter_invalid',
        param: 'amount',
        message: 'amount must be an integer number of minor units',
      });
    }
  });

  it('names the bound an integer misses', async () => {
    expect((await refusal(CreateOrderDto, { ...order, amount: 0 })).message).toBe('amount must be at least 1');
    expect((await refusal(CreateOrderDto, { ...order, amount: 100_000_000_001 })).message).toBe(
      'amount must not be greater than 100000000000',
    );
    // Past 2^53 a double holds no exact integer, but 99999999999999999999 (read as 1e20) is one: out of range.
    expect((await refusal(CreateOrderDto, { ...order, amount: 1e20 })).message).toBe(
      'amount must not be greater than 100000000000',
    );
    expect((await refusal(CreateOrderDto, { ...order, amount: -(2 ** 60) })).message).toBe('amount must be at least 1');
  });

  it('accepts the whole range', async () => {
    for (const amount of [1, 2990, 100_000_000_000]) {
      await expect(
        createValidationPipe().transform({ ...order, amount }, { type: 'body', metatype: CreateOrderDto }),
      ).resolves.toMatchObject({ amount });
    }
  });
});
