/**
 * The client's gap logic (packages/client/src/sequencer.ts), pure: per channel, events reach the
 * application once each and in seq order, whatever the socket does (drops, repeats, reorders), as long
 * as the client fills jumps from the channel's events and catches up through sync as the Sequencer asks.
 */
import fc from 'fast-check';
import type { AnyEnvelope } from '../../packages/client/src/events';
import { Sequencer } from '../../packages/client/src/sequencer';
import { jwtExpiry, TokenManager } from '../../packages/client/src/token';
import { retryAfterSeconds, toChatApiError } from '../../packages/client/src/rest';

const msg = (channel: string, seq: number, id = `${channel}-m${seq}`): AnyEnvelope =>
  ({
    v: 1,
    type: 'message.new',
    channel_id: channel,
    seq,
    data: { id, channel_id: channel, content: `#${seq}` },
    ts: new Date(1_700_000_000_000 + seq).toISOString(),
  }) as unknown as AnyEnvelope;

const reaction = (channel: string, seq: number): AnyEnvelope => ({
  v: 1,
  type: 'reaction.add',
  channel_id: channel,
  seq,
  data: { message_id: 'm', channel_id: channel, channel_external_id: channel, user_id: 'u', emoji: '👍' },
  ts: new Date(1_700_000_000_000 + seq).toISOString(),
});

describe('Sequencer', () => {
  it('delivers a channel’s events in order and drops a repeated seq', () => {
    const s = new Sequencer();
    expect(s.accept(msg('a', 1), 'sync').kind).toBe('deliver');
    expect(s.accept(msg('a', 2), 'live').kind).toBe('deliver');
    expect(s.accept(msg('a', 2), 'live').kind).toBe('duplicate');
    expect(s.accept(msg('a', 1), 'sync').kind).toBe('duplicate');
    expect(s.seq('a')).toBe(2);
  });

  it('asks for the missing range when a live event jumps, and delivers it after the fill', () => {
    const s = new Sequencer();
    s.accept(msg('a', 4), 'sync');
    expect(s.accept(msg('a', 7), 'live')).toEqual({ kind: 'gap', channel_id: 'a', after_seq: 4, seq: 7 });
    expect(s.seq('a')).toBe(4); // nothing delivered past the hole
    expect(s.accept(msg('a', 5), 'fill').kind).toBe('deliver');
    // seq 6 is an event this user may not see (a blocked user's message): the fill does not return it
    s.settled('a', 6);
    expect(s.accept(msg('a', 7), 'live').kind).toBe('deliver');
    expect(s.accept(msg('a', 5), 'live').kind).toBe('duplicate');
  });

  it('asks for a catch-up before the first live event of a channel it has no seq for', () => {
    const s = new Sequencer();
    expect(s.accept(msg('b', 9), 'live')).toEqual({ kind: 'unknown', channel_id: 'b', seq: 9 });
    // the catch-up found the channel's events up to 9: the live one is then a repeat
    s.accept(msg('b', 8), 'sync');
    s.accept(msg('b', 9), 'sync');
    expect(s.accept(msg('b', 9), 'live', { trustUnknown: true }).kind).toBe('duplicate');
    // a channel the catch-up did not place starts at its first live event
    expect(s.accept(msg('c', 3), 'live', { trustUnknown: true }).kind).toBe('deliver');
    expect(s.accept(msg('c', 4), 'live').kind).toBe('deliver');
  });

  it('takes sync’s holes as events the user may not see', () => {
    const s = new Sequencer();
    s.accept(msg('a', 1), 'sync');
    expect(s.accept(msg('a', 3), 'sync').kind).toBe('deliver');
    expect(s.seq('a')).toBe(3);
  });

  it('drops a message.new whose message was already delivered, and still advances the seq', () => {
    const s = new Sequencer();
    s.accept(msg('a', 1, 'same'), 'sync');
    expect(s.accept(msg('a', 2, 'same'), 'live').kind).toBe('duplicate');
    expect(s.seq('a')).toBe(2);
    expect(s.accept(reaction('a', 3), 'live').kind).toBe('deliver');
  });

  it('delivers typing and presence as they come, and logged events without a seq once', () => {
    const s = new Sequencer();
    const typing: AnyEnvelope = {
      v: 1,
      type: 'typing.start',
      channel_id: 'a',
      data: { user_id: 'u', external_id: 'bo' },
      ts: 't',
    };
    expect([s.accept(typing, 'live').kind, s.accept(typing, 'live').kind]).toEqual(['deliver', 'deliver']);
    const state: AnyEnvelope = {
      v: 1,
      type: 'channel.state_changed',
      channel_id: 'a',
      data: { channel_id: 'a', muted_until: null, hidden: true, archived: false },
      ts: '2026-01-01T00:00:00.000Z',
    };
    expect([s.accept(state, 'live').kind, s.accept(state, 'sync').kind]).toEqual(['deliver', 'duplicate']);
  });

  it('forgets every channel after a reset', () => {
    const s = new Sequencer();
    s.accept(msg('a', 1), 'sync');
    s.forget();
    expect(s.seq('a')).toBeUndefined();
    expect(s.accept(msg('a', 5), 'live').kind).toBe('unknown');
  });

  /**
   * A model of the client around the Sequencer, as packages/client/src/realtime.ts drives it: a server
   * log per channel (some events hidden from this user), a socket that drops, repeats and reorders, a
   * fill from the log on a gap, a sync over all channels on `unknown` and at the end (a reconnect).
   */
  it('whatever the socket does, each visible event is delivered once, in seq order (property)', () => {
    const channels = ['a', 'b', 'c'];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            channel: fc.constantFrom(...channels),
            hidden: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
            fate: fc.constantFrom('ok', 'ok', 'ok', 'drop', 'twice', 'late'),
          }),
          { minLength: 1, maxLength: 80 },
        ),
        (script) => {
          const log = new Map<string, { env: AnyEnvelope; hidden: boolean }[]>(channels.map((c) => [c, []]));
          const socket: AnyEnvelope[] = [];
          const late: AnyEnvelope[] = [];
          for (const step of script) {
            const events = log.get(step.channel)!;
            const env = msg(step.channel, events.length + 1);
            events.push({ env, hidden: step.hidden });
            if (step.hidden) continue; // the server never sends it to this user
            if (step.fate === 'ok') socket.push(env);
            if (step.fate === 'twice') socket.push(env, env);
            if (step.fate === 'late') late.push(env);
            if (late.length && step.fate === 'ok') socket.push(late.shift()!);
          }
          socket.push(...late);

          const s = new Sequencer();
          const delivered = new Map<string, number[]>(channels.map((c) => [c, []]));
          const deliver = (e: AnyEnvelope) => delivered.get(e.channel_id!)!.push(e.seq!);
          let synced = 0; // the sync cursor: how many of the script's events sync already covered
          const order = script.map((st, i) => ({
            channel: st.channel,
            seq: script.slice(0, i + 1).filter((x) => x.channel === st.channel).length,
          }));
          const sync = (upTo: number) => {
            for (const { channel, seq } of order.slice(synced, upTo)) {
              const e = log.get(channel)![seq - 1]!;
              if (!e.hidden && s.accept(e.env, 'sync').kind === 'deliver') deliver(e.env);
            }
            synced = Math.max(synced, upTo);
          };
          const fill = (c: string, after: number, seq: number) => {
            for (const e of log.get(c)!.slice(after, seq - 1))
              if (!e.hidden && s.accept(e.env, 'fill').kind === 'deliver') deliver(e.env);
            s.settled(c, seq - 1);
          };
          for (const env of socket) {
            let trust = false;
            for (;;) {
              const d = s.accept(env, 'live', { trustUnknown: trust });
              if (d.kind === 'deliver') deliver(env);
              if (d.kind === 'gap') {
                fill(d.channel_id, d.after_seq, d.seq);
                continue;
              }
              if (d.kind === 'unknown') {
                // the live event is committed, so a sync now covers it
                sync(order.findIndex((o) => o.channel === env.channel_id && o.seq === env.seq) + 1);
                trust = true;
                continue;
              }
              break;
            }
          }
          sync(order.length); // a reconnect (or the periodic catch-up) at the end

          for (const c of channels) {
            const visible = log
              .get(c)!
              .filter((e) => !e.hidden)
              .map((e) => e.env.seq!);
            expect(delivered.get(c)).toEqual(visible);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('tokens and errors', () => {
  const jwt = (claims: object) => `x.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.y`;

  it('reads exp from a JWT, and nothing from what is not one', () => {
    expect(jwtExpiry(jwt({ exp: 1_900_000_000 }))).toBe(1_900_000_000_000);
    expect(jwtExpiry('not-a-jwt')).toBeUndefined();
    expect(jwtExpiry(jwt({ sub: 'ana' }))).toBeUndefined();
  });

  it('asks the provider again ahead of exp, and not in the first three quarters of a short token’s life', async () => {
    let now = 1_000_000_000_000;
    const iat = now / 1000;
    let calls = 0;
    const m = new TokenManager(
      () => (calls++, jwt({ iat, exp: iat + 40, n: calls })),
      60_000,
      () => now,
    );
    await m.get();
    await m.get();
    expect(calls).toBe(1);
    expect(m.msUntilRefresh()).toBe(30_000);
    now += 30_000;
    await m.get();
    expect(calls).toBe(2);
    expect(new TokenManager('fixed', 60_000).msUntilRefresh()).toBeUndefined();
  });

  it('turns the error body into a ChatApiError with code, status and Retry-After', async () => {
    const res = new Response(
      JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'slow down', request_id: 'r1' } }),
      {
        status: 429,
        headers: { 'retry-after': '3', 'content-type': 'application/json' },
      },
    );
    const e = await toChatApiError(res);
    expect([e.name, e.code, e.status, e.message, e.requestId, e.retryAfterSeconds, e.retryable]).toEqual([
      'ChatApiError',
      'RATE_LIMITED',
      429,
      'slow down',
      'r1',
      3,
      true,
    ]);
    const plain = await toChatApiError(new Response('<html>', { status: 502 }));
    expect([plain.code, plain.status, plain.retryable]).toEqual(['INTERNAL', 502, true]);
    expect(retryAfterSeconds(null)).toBeUndefined();
  });
});
