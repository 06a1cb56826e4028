import { DataSource } from 'typeorm';
import type { TestApp } from '../support/app';
import { newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

/** The message object of CONTRACT §7 as the tests read it. */
export interface Msg {
  id: string;
  channel_id: string;
  channel_external_id: string;
  user_id: string | null;
  user: { id: string; external_id: string; name: string | null; avatar_url: string | null } | null;
  content: string;
  type: string;
  attachment_url: string | null;
  attachment: unknown;
  parent_id?: string;
  quoted_message?: {
    id: string;
    user_id: string | null;
    user_name: string | null;
    content: string;
    type: string;
    deleted: boolean;
  };
  mentions?: { user_id: string; external_id: string; name: string | null }[];
  /** CONTRACT §23: a user's read state of the thread, on non-replies shown to a user. */
  thread?: { participant: boolean; unread_replies: number; last_read_at: string | null };
  reactions: { emoji: string; count: number; reacted_by_me: boolean }[];
  pinned_at: string | null;
  pinned_by: { id: string; external_id: string; name: string | null } | null;
  receipt_status: string;
  created_at: string;
  edited_at: string | null;
  deleted_at: string | null;
}

export interface Page {
  messages: Msg[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Room {
  ws: TestWorkspace;
  ch: { id: string; external_id: string };
  ana: TestUser;
  bo: TestUser;
  cy: TestUser;
}

let seq = 0;

/** A workspace with ana (admin), bo and cy in one group channel. */
export async function room(t: TestApp): Promise<Room> {
  const ws = await newWorkspace(t);
  const [ana, bo, cy] = await Promise.all([ws.user('ana', 'Ana'), ws.user('bo', 'Bo'), ws.user('cy', 'Cy')]);
  const ch = await group(ws, 'ana', ['bo', 'cy']);
  return { ws, ch, ana, bo, cy };
}

export async function group(
  ws: TestWorkspace,
  by: string,
  members: string[],
): Promise<{ id: string; external_id: string }> {
  const res = await ws.api.post('/v1/channels', {
    type: 'group',
    external_id: `grp-${++seq}-${Date.now()}`,
    name: 'Group',
    created_by: by,
    member_external_ids: members,
  });
  if (res.status !== 201) throw new Error(`setup: create channel answered ${res.status} ${res.text}`);
  await sleep(3); // members' cursors start at the join instant; keep messages strictly later
  return res.body;
}

export async function send(
  user: TestUser,
  channelId: string,
  body: Record<string, unknown> | string,
): Promise<Msg> {
  const res = await user.api.post(
    `/v1/channels/${channelId}/messages`,
    typeof body === 'string' ? { content: body } : body,
  );
  if (res.status !== 201) throw new Error(`setup: send answered ${res.status} ${res.text}`);
  return res.body as Msg;
}

export async function history(
  client: TestUser['api'],
  channelId: string,
  query: Record<string, string | number> = {},
): Promise<Page> {
  const qs = new URLSearchParams(
    Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  const res = await client.get(`/v1/channels/${channelId}/messages${qs ? `?${qs}` : ''}`);
  if (res.status !== 200) throw new Error(`history answered ${res.status} ${res.text}`);
  return res.body as Page;
}

export interface LoggedEvent {
  type: string;
  seq: number | null;
  payload: Record<string, unknown>;
}

/** The channel's rows in the event log (the outbox), in seq order (the order they committed within the channel). */
export async function eventsOf(t: TestApp, channelId: string): Promise<LoggedEvent[]> {
  return t.app
    .get(DataSource)
    .query(`SELECT type, seq, payload FROM events WHERE channel_id = $1 ORDER BY seq, position`, [channelId]);
}

/** Only the message events (channel.created and friends left out). */
export async function messageEvents(t: TestApp, channelId: string): Promise<LoggedEvent[]> {
  return (await eventsOf(t, channelId)).filter((e) => e.type.startsWith('message.'));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
