import { EventEmitter } from 'events';
import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/config.schema';
import { Metrics } from '../ops/metrics';
import { LoadShedder, QUOTA_WAIT_MS } from './load-shedder';

/** A request through the middleware: whether it went on, and what it was answered if refused. */
interface Call {
  admitted: boolean;
  status?: number;
  body?: { error: { code: string } };
  retryAfter?: string;
  finish: () => void;
  req: Request;
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
  /** A request with `who`'s credentials (`Bearer pk_<who>:sk_secret`). */
  const call = (who: string, path = '/v1/workspace', secret = 'sk_secret'): Call => {
    const res = new EventEmitter() as EventEmitter & Record<string, unknown>;
    const req = { path, headers: { authorization: `Bearer pk_${who}:${secret}` } } as unknown as Request;
    const c: Call = { admitted: false, finish: () => res.emit('close'), req };
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
  /** The AuthGuard accepted `who`'s credentials once (a request through an empty instance): workspace `who`. */
  const vouched = (...who: string[]) => {
    for (const w of who) {
      const c = call(w);
      s.vouch(c.req, w, perWorkspace);
      c.finish();
    }
    order.length = 0;
  };
  return { s, call, order, vouched };
}

describe('LoadShedder', () => {
  afterEach(() => jest.useRealTimers());

  it('gives free turns to the workspace with the fewest in flight: one that floods waits behind itself', () => {
    jest.useFakeTimers();
    const { call, order, vouched } = shedder(4, 100, 10_000);
    vouched('a', 'b');
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

  it('takes a workspace’s turns only with credentials seen accepted; the others share one bucket, served last', () => {
    jest.useFakeTimers();
    const { call, order, vouched } = shedder(4, 2, 10_000);
    vouched('a', 'b');
    const a = [call('a'), call('a')]; // a at its quota of 2
    // the same API key with a made-up secret (or a token never accepted) takes none of a's turns
    const forged = [call('a', undefined, 'sk_forged'), call('a', undefined, 'sk_forged')];
    expect([...a, ...forged].map((c) => c.admitted)).toEqual([true, true, true, true]);
    const forgedWaits = call('a', undefined, 'sk_forged'); // the unverified bucket at its quota too
    const aWaits = call('a');
    const b = call('b');
    expect([forgedWaits.admitted, aWaits.admitted, b.admitted]).toEqual([false, false, false]);
    forged[0]!.finish(); // the free turn goes to b, a workspace, before the unverified bucket
    expect(order.slice(4)).toEqual(['b']);
    a[0]!.finish();
    expect(order.slice(5)).toEqual(['a']);
    b.finish(); // no workspace waits: the unverified bucket's turn
    expect(order.slice(6)).toEqual(['a']);
    expect(forgedWaits.admitted).toBe(true);
  });

  it('refuses at once more waiting requests than the instance frees turns for within a wait', () => {
    jest.useFakeTimers();
    const { call, vouched } = shedder(4, 100, 100);
    vouched('a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'b2', 'b3', 'c');
    for (let i = 0; i < 4; i++) call(`a${i}`);
    const waiting = Array.from({ length: 4 }, (_, i) => call(`b${i}`));
    expect(waiting.every((c) => !c.admitted && c.status === undefined)).toBe(true);
    expect(call('c')).toMatchObject({ status: 503, retryAfter: '1' });
  });

  it('refuses with 503 what waited its turn behind a full instance, 429 behind its own workspace’s quota', () => {
    jest.useFakeTimers();
    const { call, vouched } = shedder(2, 1, 100);
    vouched('a', 'b', 'c');
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
    const { call, vouched } = shedder(3, 2, 50);
    vouched('a', 'b', 'c');
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
    const { call, order, vouched } = shedder(2, 100, 1_000);
    vouched('a', 'b', 'c', 'd');
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
