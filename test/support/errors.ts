import type { Response } from 'supertest';

/** Asserts the contract's error shape (CONTRACT §2): status, code, a message and the request id. */
export function expectError(res: Response, status: number, code: string): void {
  if (res.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text}`);
  }
  const body = res.body as { error?: { code?: unknown; message?: unknown; request_id?: unknown } };
  expect(body.error).toBeDefined();
  expect(body.error?.code).toBe(code);
  expect(typeof body.error?.message).toBe('string');
  expect(body.error?.request_id).toBe(res.headers['x-request-id']);
  expect(typeof body.error?.request_id).toBe('string');
}
