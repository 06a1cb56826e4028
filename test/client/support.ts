import { ChatClient, type AnyEnvelope, type ChatClientOptions } from '../../packages/client/src';
import type { TestApp } from '../support/app';
import { userToken, type TestUser, type TestWorkspace } from '../support/fixtures';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Calls `fn` until it answers true, or fails naming `what`. */
export async function until(
  what: string,
  fn: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** A real ChatClient for a user of the test app, recording every event it delivers and every request path. */
export interface Recorded {
  client: ChatClient;
  events: AnyEnvelope[];
  errors: unknown[];
  statuses: string[];
  /** method and path of every REST call the client made */
  calls: string[];
  tokensIssued: () => number;
}

export function recordedClient(
  t: TestApp,
  ws: TestWorkspace,
  user: TestUser,
  options: Partial<ChatClientOptions> & { ttlSeconds?: number; fetch?: typeof fetch } = {},
): Recorded {
  let issued = 0;
  const calls: string[] = [];
  const inner = options.fetch ?? fetch;
  const counting: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    return inner(input, init);
  };
  const { ttlSeconds, ...rest } = options;
  const client = new ChatClient({
    baseUrl: t.baseUrl,
    token: () => {
      issued++;
      return userToken(ws.apiKey, ws.apiSecret, user.external_id, ttlSeconds ?? 3600);
    },
    ...rest,
    fetch: counting,
  });
  const events: AnyEnvelope[] = [];
  const errors: unknown[] = [];
  const statuses: string[] = [];
  client.onAny((e) => events.push(e));
  client.onError((e) => errors.push(e));
  client.onStatus((s) => statuses.push(s));
  return { client, events, errors, statuses, calls, tokensIssued: () => issued };
}

/** The message.new events of one channel, as [seq, message id]. */
export function messagesOf(events: AnyEnvelope[], channelId: string): { seq: number; id: string }[] {
  return events
    .filter((e) => e.type === 'message.new' && e.channel_id === channelId)
    .map((e) => ({ seq: e.seq!, id: (e.data as { id: string }).id }));
}

/**
 * The assertion of the gap-free tests: the reader got every message the sender had acknowledged, once
 * each, in the order they were sent, and the channel's seqs it saw are contiguous (only messages were
 * sent meanwhile).
 */
export function expectExactly(events: AnyEnvelope[], channelId: string, sentIds: string[]): void {
  const got = messagesOf(events, channelId);
  expect(got.map((m) => m.id)).toEqual(sentIds);
  const seqs = events.filter((e) => e.channel_id === channelId && e.seq !== undefined).map((e) => e.seq!);
  expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
}

/**
 * Waits until the reader holds as many of the channel's messages as were sent, lets anything extra (a
 * repeat) arrive, then asserts expectExactly.
 */
export async function expectAllReceived(
  events: AnyEnvelope[],
  channelId: string,
  sentIds: string[],
  timeoutMs = 30_000,
): Promise<void> {
  await until(
    'every sent message at the reader',
    () => messagesOf(events, channelId).length >= sentIds.length,
    timeoutMs,
  );
  await sleep(300); // anything extra (a repeat) would arrive now
  expectExactly(events, channelId, sentIds);
}
