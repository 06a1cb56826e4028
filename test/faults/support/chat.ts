import { sign } from 'jsonwebtoken';
import type { FaultEnvironment, ServiceProcess } from './processes';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
  ms: number;
}

/** One REST call over the network (the services are other processes); a network failure is status 0. */
export async function call(
  base: string | ServiceProcess,
  method: string,
  path: string,
  authorization: string | null,
  body?: unknown,
  timeoutMs = 20_000,
): Promise<Reply> {
  const url = `${typeof base === 'string' ? base : base.baseUrl}${path}`;
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method,
      headers: {
        ...(authorization ? { authorization } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers, ms: Date.now() - started };
  } catch (e) {
    return { status: 0, body: { transport: String(e) }, headers: new Headers(), ms: Date.now() - started };
  }
}

export interface ChatUser {
  externalId: string;
  id: string;
  token: string;
  auth: string;
}

export interface ChatRoom {
  workspace: { id: string; apiKey: string; apiSecret: string; auth: string };
  channelId: string;
  users: ChatUser[];
  /** A user token that expires after `ttlSeconds`. */
  tokenFor: (externalId: string, ttlSeconds?: number) => string;
}

/** A workspace with the given users in one group channel (the first creates it), made through `via`. */
export async function chatRoom(
  env: Pick<FaultEnvironment, 'adminToken'>,
  via: ServiceProcess,
  externalIds: string[],
): Promise<ChatRoom> {
  const ws = await call(via, 'POST', '/v1/admin/workspaces', `Bearer ${env.adminToken}`, {
    name: `faults-${Date.now().toString(36)}`,
  });
  if (ws.status !== 201)
    throw new Error(`setup: create workspace answered ${ws.status} ${JSON.stringify(ws.body)}`);
  const workspace = {
    id: ws.body.id as string,
    apiKey: ws.body.api_key as string,
    apiSecret: ws.body.api_secret as string,
    auth: `Bearer ${ws.body.api_key}:${ws.body.api_secret}`,
  };
  const tokenFor = (sub: string, ttlSeconds = 3600) => {
    const iat = Math.floor(Date.now() / 1000);
    return sign({ sub, iat, exp: iat + ttlSeconds }, workspace.apiSecret, {
      algorithm: 'HS256',
      keyid: workspace.apiKey,
    });
  };
  const users: ChatUser[] = [];
  for (const externalId of externalIds) {
    const r = await call(via, 'PUT', `/v1/users/${externalId}`, workspace.auth, { name: externalId });
    if (r.status !== 200 && r.status !== 201)
      throw new Error(`setup: upsert ${externalId} answered ${r.status} ${JSON.stringify(r.body)}`);
    const token = tokenFor(externalId);
    users.push({ externalId, id: r.body.id, token, auth: `Bearer ${token}` });
  }
  const [creator, ...members] = externalIds;
  const ch = await call(via, 'POST', '/v1/channels', workspace.auth, {
    type: 'group',
    external_id: `g-${Date.now().toString(36)}`,
    created_by: creator,
    member_external_ids: members,
  });
  if (ch.status !== 201)
    throw new Error(`setup: create channel answered ${ch.status} ${JSON.stringify(ch.body)}`);
  return { workspace, channelId: ch.body.id, users, tokenFor };
}

export function send(via: ServiceProcess, room: ChatRoom, user: ChatUser, content: string): Promise<Reply> {
  return call(via, 'POST', `/v1/channels/${room.channelId}/messages`, user.auth, { content });
}

/** Every message id of the channel's history, oldest first (all pages). */
export async function historyIds(via: ServiceProcess, room: ChatRoom, user: ChatUser): Promise<string[]> {
  return (await history(via, room.channelId, user)).map((m) => m.id);
}

/** Every message of a channel's history, oldest first (all pages). */
export async function history(
  via: ServiceProcess,
  channelId: string,
  user: ChatUser,
): Promise<{ id: string; content: string }[]> {
  const messages: { id: string; content: string }[] = [];
  let before: string | null = null;
  for (;;) {
    const r = await call(
      via,
      'GET',
      `/v1/channels/${channelId}/messages?limit=100${before ? `&before=${encodeURIComponent(before)}` : ''}`,
      user.auth,
    );
    if (r.status !== 200) throw new Error(`history answered ${r.status} ${JSON.stringify(r.body)}`);
    messages.unshift(...(r.body.messages as { id: string; content: string }[]));
    if (!r.body.has_more || !r.body.next_cursor) return messages;
    before = r.body.next_cursor;
  }
}

/** The contract's error body (CONTRACT §2) with the given code, and Retry-After on a 503. */
export function isContractError(r: Reply, code: string): boolean {
  const e = r.body?.error;
  const shaped = typeof e === 'object' && e !== null && e.code === code && typeof e.message === 'string';
  return shaped && (r.status !== 503 || Number(r.headers.get('retry-after')) >= 1);
}

export function p99(samples: number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] ?? 0;
}

/** A counter of the service's /metrics, summed over its labels (0 when absent). */
export async function metric(
  via: ServiceProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const r = await call(via, 'GET', '/metrics', null);
  if (r.status !== 200 || typeof r.body !== 'string') throw new Error(`/metrics answered ${r.status}`);
  let sum = 0;
  for (const line of r.body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? ([\d.eE+-]+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/** Every event of the room's channel, in seq order (all pages of /v1/channels/:id/events). */
export async function channelEvents(
  via: ServiceProcess,
  room: ChatRoom,
): Promise<{ type: string; seq: number; data: any }[]> {
  const out: { type: string; seq: number; data: any }[] = [];
  let after = 0;
  for (;;) {
    const r = await call(
      via,
      'GET',
      `/v1/channels/${room.channelId}/events?after_seq=${after}&limit=500`,
      room.workspace.auth,
    );
    if (r.status !== 200) throw new Error(`events answered ${r.status} ${JSON.stringify(r.body)}`);
    for (const e of r.body.events as { type: string; seq: number; data: any }[]) {
      after = e.seq;
      out.push(e);
    }
    if (!r.body.has_more) return out;
  }
}
