import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import { QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';
import { AppError, errorBody, httpStatusOf } from './app-error';
import { toAppError } from './to-app-error';

describe('toAppError', () => {
  it('passes AppErrors through', () => {
    const e = new AppError('NOT_A_MEMBER');
    expect(toAppError(e)).toEqual({ error: e, unexpected: false });
  });

  it('turns anything unknown into a 500 INTERNAL that leaks nothing', () => {
    const { error, unexpected } = toAppError(
      new Error('relation "secret_table" does not exist at SELECT * FROM ...'),
    );
    expect(unexpected).toBe(true);
    expect(error.code).toBe('INTERNAL');
    expect(httpStatusOf(error.code)).toBe(500);
    const body = JSON.stringify(errorBody(error, 'rid'));
    expect(body).not.toContain('secret_table');
    expect(body).not.toContain('SELECT');
    expect(errorBody(error, 'rid')).toEqual({
      error: { code: 'INTERNAL', message: 'Internal error', request_id: 'rid' },
    });
    expect(toAppError('a string').error.code).toBe('INTERNAL');
    expect(toAppError(null).error.code).toBe('INTERNAL');
  });

  it('maps a dependency outage to 503 UNAVAILABLE with Retry-After', () => {
    const { error } = toAppError(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    );
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('maps an exhausted database pool to 503 UNAVAILABLE, not a 500', () => {
    const { error } = toAppError(new Error('timeout exceeded when trying to connect'));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('maps framework and body-parser errors to contract codes', () => {
    expect(toAppError(new NotFoundException()).error.code).toBe('NOT_FOUND');
    expect(toAppError(new BadRequestException('x')).error.code).toBe('VALIDATION_ERROR');
    expect(toAppError(new PayloadTooLargeException()).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(toAppError({ type: 'entity.too.large', status: 413 }).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(toAppError({ type: 'entity.parse.failed', status: 400 }).error.code).toBe('VALIDATION_ERROR');
    expect(toAppError({ type: 'encoding.unsupported', status: 415 }).error.code).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('maps a database that went away (restart, crash, lost connection) to 503 UNAVAILABLE', () => {
    for (const err of [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      new Error('Connection terminated unexpectedly'),
      new QueryFailedError('SELECT 1', [], new Error('Connection terminated unexpectedly')),
      new Error('Client was closed and is not queryable'),
      new QueryRunnerAlreadyReleasedError(),
    ]) {
      const { error, unexpected } = toAppError(err);
      expect([error.code, unexpected]).toEqual(['UNAVAILABLE', true]);
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
  });

  it('maps Redis away (a command given up after its retries, a closed connection) to 503 UNAVAILABLE', () => {
    for (const err of [
      new MaxRetriesPerRequestError(2),
      new Error('Connection is closed.'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
    ]) {
      const { error } = toAppError(err);
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
  });

  it('maps text PostgreSQL cannot store (NUL bytes) to 400 VALIDATION_ERROR', () => {
    for (const code of ['22021', '22P05']) {
      const { error, unexpected } = toAppError(
        Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code }),
      );
      expect([error.code, unexpected, httpStatusOf(error.code)]).toEqual(['VALIDATION_ERROR', false, 400]);
      expect(error.message).not.toContain('UTF8');
    }
  });
});
