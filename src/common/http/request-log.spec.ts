import express from 'express';
import request from 'supertest';
import { QueryFailedError } from 'typeorm';
import { requestIdMiddleware } from './request-id';
import { createLogger, requestLogMiddleware, SLOW_REQUEST_MS } from './request-log';

interface Line {
  level: number;
  msg: string;
  request_id?: string;
  req?: { id: string; method: string; url: string; headers: Record<string, string> };
  res?: { statusCode: number };
  responseTime?: number;
  slow?: boolean;
}

function appLoggingAt(level: string) {
  const lines: Line[] = [];
  const logger = createLogger(level, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
  const app = express();
  app.use(requestIdMiddleware as express.RequestHandler);
  app.use(requestLogMiddleware(logger));
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.get('/healthz', (_req, res) => void res.json({ ok: true }));
  app.get('/missing', (_req, res) => void res.status(404).json({ error: 'no' }));
  app.get('/boom', (_req, res) => void res.status(500).json({ error: 'boom' }));
  app.get('/slow', (_req, res) => void setTimeout(() => res.json({ ok: true }), SLOW_REQUEST_MS + 20));
  // the 'close' listener runs after the response is written: give it a tick
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await request(app).get(path).set(headers);
    await new Promise((r) => setImmediate(r));
    return res;
  };
  return { lines, get };
}

describe('request logging', () => {
  it('at info: nothing for a successful request, warn for 4xx, error for 5xx, with the request id', async () => {
    const { lines, get } = appLoggingAt('info');
    await get('/ok');
    await get('/healthz');
    expect(lines).toEqual([]);

    const missing = await get('/missing', { 'X-Request-Id': 'req-404' });
    expect(missing.headers['x-request-id']).toBe('req-404');
    await get('/boom', { 'X-Request-Id': 'req-500' });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'request completed',
      request_id: 'req-404',
      req: { id: 'req-404', method: 'GET', url: '/missing' },
      res: { statusCode: 404 },
    });
    expect(lines[1]).toMatchObject({
      level: 50,
      msg: 'request errored',
      request_id: 'req-500',
      res: { statusCode: 500 },
    });
    expect(typeof lines[1]!.responseTime).toBe('number');
  });

  it('redacts credentials and tokens in the URL', async () => {
    const { lines, get } = appLoggingAt('info');
    await get('/missing?token=secret-value&x=1', { Authorization: 'Bearer pk_a:sk_b', Cookie: 'c=1' });
    expect(lines[0]!.req!.url).toBe('/missing?token=[Redacted]&x=1');
    expect(lines[0]!.req!.headers.authorization).toBe('[Redacted]');
    expect(lines[0]!.req!.headers.cookie).toBe('[Redacted]');
    expect(JSON.stringify(lines)).not.toContain('sk_b');
  });

  it('logs a slow request at warn', async () => {
    const { lines, get } = appLoggingAt('info');
    await get('/slow');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, slow: true, res: { statusCode: 200 } });
  });

  it('at debug: every request but the probes', async () => {
    const { lines, get } = appLoggingAt('debug');
    await get('/ok');
    await get('/healthz');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 20,
      msg: 'request completed',
      req: { url: '/ok' },
      res: { statusCode: 200 },
    });
  });

  it('at error: only 5xx', async () => {
    const { lines, get } = appLoggingAt('error');
    await get('/missing');
    await get('/boom');
    expect(lines.map((l) => l.res?.statusCode)).toEqual([500]);
  });

  it("never logs a failed statement's bound values (TypeORM parameters, pg's detail)", () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (x: string) => void lines.push(x) });
    const driverError = Object.assign(
      new Error('duplicate key value violates unique constraint "users_pkey"'),
      {
        code: '23505',
        detail: 'Key (external_id)=(hunter2-user) already exists.',
      },
    );
    const err = new QueryFailedError(
      'INSERT INTO users (metadata) VALUES ($1)',
      [{ password: 'hunter2' }, 'hunter2-user'],
      driverError,
    );
    logger.error({ err }, 'unhandled error');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('hunter2');
    const logged = JSON.parse(lines[0]!) as { err: { query: string; message: string; code: string } };
    expect(logged.err).toMatchObject({ query: 'INSERT INTO users (metadata) VALUES ($1)', code: '23505' });
    expect(logged.err.message).toContain('duplicate key');
  });
});
