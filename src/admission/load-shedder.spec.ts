import { EventEmitter } from 'events';
import type { NextFunction, Request, Response } from 'express';
import { sign } from 'jsonwebtoken';
import type { AppConfig } from '../config/config.schema';
import { Metrics } from '../ops/metrics';
import { LoadShedder, QUOTA_WAIT_MS, tenantKey } from './load-shedder';

/** A request through the middleware: whether it went on, and what it was answered if refused. */
interface Call {
  admitted: boolean;
  status?: number;
  body?: { error: { code: string } };
  retryAfter?: string;
  finish: () => void;
}

function shedder(limit: number, perWorkspace: number, maxWaitMs: number) {
  const config = {
    maxRequestsInFlight: limit,
    SERVICE_WORKSPACE_CONCURRENT_REQUESTS: perWorkspace,
    SERVICE_MAX_QUEUE_WAIT_MS: maxWaitMs,
    maxEventLoopDelayMs: 0,
  } as AppConfig;
  const s = new LoadShedder(config, new Metrics());
  const mw = s.middleware();
  const order: string[] = [];
  const call = (who: string, path = '/v1/workspace'): Call => {
    const res = new EventEmitter() as EventEmitter & Record<string, unknown>;
    const c: Call = { admitted: false, finish: () => res.emit('close') };
    Object.assign(res, {
      headersSent: false,
      destroyed: false,
      setHeader: (k: string, v: string) => k === 'Retry-After' && (c.retryAfter = v),
      status: (n: number) => ({
        json: (b: Call['body']) => {
          c.status = n;
          c.body = b;
        },
      }),
    });
    const req = { path, headers: { authorization: `Bearer pk_${who}:sk_secret` } } as unknown as Request;
    mw(
      req,
      res as unknown as Response,
      (() => {
        c.admitted = true;
        order.push(who);
      }) as NextFunction,
    );
    return c;
  };
  return { s, call, order };
}

describe('LoadShedder', () => {
  afterEach(() => jest.useRealTimers());

  it('reads the API key the credentials name, unchecked', () => {
    expect(tenantKey('Bearer pk_abc:sk_def')).toBe('pk_abc');
    expect(tenantKey(`Basic ${Buffer.from('pk_abc:sk_def').toString('base64')}`)).toBe('pk_abc');
    expect(tenantKey(`Bearer ${sign({ sub: 'u' }, 'x', { keyid: 'pk_jwt' })}`)).toBe('pk_jwt');
    expect(tenantKey(undefined)).toBe('');
    expect(tenantKey('Bearer admin-token')).toBe('other');
    expect(tenantKey('Bearer e30.not-json')).toBe('other');
  });

  it('gives free turns to the workspace with the fewest in flight: one that floods waits behind itself', () => {
    jest.useFakeTimers();
    const { call, order } = shedder(4, 100, 10_000);
    const a = [call('a'), call('a'), call('a'), call('a')];
    const queuedA = [call('a'), call('a'), call('a')];
    const b = call('b');
    expect(a.every((c) => c.admitted)).toBe(true);
    expect([...queuedA, b].map((c) => c.admitted)).toEqual([false, false, false, false]);

    a[0]!.finish(); // the next turn is b's, though a's requests came first
    expect(order.slice(4)).toEqual(['b']);
    a[1]!.finish();
    expect(order.slice(5)).toEqual(['a']);
    b.finish();
    expect(order.slice(6)).toEqual(['a']);
  });

  it('refuses at once more waiting requests than the instance frees turns for within a wait', () => {
    jest.useFakeTimers();
    const { call } = shedder(4, 100, 100);
    for (let i = 0; i < 4; i++) call(`a${i}`);
    const waiting = Array.from({ length: 4 }, (_, i) => call(`b${i}`));
    expect(waiting.every((c) => !c.admitted && c.status === undefined)).toBe(true);
    expect(call('c')).toMatchObject({ status: 503, retryAfter: '1' });
  });

  it('refuses with 503 what waited its turn behind a full instance, 429 behind its own workspace’s quota', () => {
    jest.useFakeTimers();
    const { call } = shedder(2, 1, 100);
    const a = call('a');
    const aWaits = call('a'); // a has its one request in progress
    const b = call('b');
    const cWaits = call('c'); // the instance has its two
    expect([a.admitted, aWaits.admitted, b.admitted, cWaits.admitted]).toEqual([true, false, true, false]);
    jest.advanceTimersByTime(150);
    expect(cWaits).toMatchObject({ status: 503, retryAfter: '1', body: { error: { code: 'UNAVAILABLE' } } });
    expect(aWaits.status).toBeUndefined(); // behind its own workspace only: it may wait longer
    jest.advanceTimersByTime(QUOTA_WAIT_MS);
    expect(aWaits).toMatchObject({ status: 429, retryAfter: '1', body: { error: { code: 'RATE_LIMITED' } } });
  });

  it('times a wait for the instance from when its workspace’s own turn came free, not from its arrival', () => {
    jest.useFakeTimers();
    const { call } = shedder(3, 2, 50);
    const a = [call('a'), call('a')]; // a at its quota
    const [a3, a4] = [call('a'), call('a')];
    jest.advanceTimersByTime(1_000); // behind a's own quota: they may wait
    expect([a3.status, a4.status]).toEqual([undefined, undefined]);
    expect(call('c').admitted).toBe(true); // the instance is full now
    const b = call('b');
    expect(b.admitted).toBe(false);
    a[0]!.finish(); // a's turn frees, and goes to b (fewer in flight)
    expect(b.admitted).toBe(true);
    jest.advanceTimersByTime(25);
    expect(a3.status).toBeUndefined(); // not refused for the second it waited behind its quota
    jest.advanceTimersByTime(50);
    expect(a3).toMatchObject({ status: 503 }); // then 50 ms for the instance, which stayed full
    expect(a4.status).toBeUndefined(); // still behind a's quota
  });

  it('never holds the probes and the scrape', () => {
    jest.useFakeTimers();
    const { call } = shedder(1, 100, 10_000);
    call('a');
    for (const path of ['/readyz', '/healthz', '/metrics']) expect(call('d', path).admitted).toBe(true);
  });

  it('lets a waiting request go when its client gives up', () => {
    jest.useFakeTimers();
    const { call, order } = shedder(2, 100, 1_000);
    const first = call('a');
    call('b');
    const gaveUp = call('c');
    const next = call('d');
    gaveUp.finish(); // the client closed the connection while it waited
    first.finish();
    expect(next.admitted).toBe(true);
    expect(order).toEqual(['a', 'b', 'd']);
  });
});
