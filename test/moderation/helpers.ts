import { DataSource } from 'typeorm';
import type { TestApp } from '../support/app';
import type { TestWorkspace } from '../support/fixtures';

export interface AuditEntry {
  id: string;
  channel_id: string;
  user_id: string;
  message_id: string | null;
  rule: string;
  action: string;
  excerpt: string;
  created_at: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  has_more: boolean;
  next_cursor: string | null;
}

/** PATCH /v1/workspace/settings with `moderation` (enabled unless the patch says otherwise). */
export async function moderate(ws: TestWorkspace, moderation: Record<string, unknown>): Promise<void> {
  const res = await ws.api.patch('/v1/workspace/settings', { moderation: { enabled: true, ...moderation } });
  if (res.status !== 200) throw new Error(`settings answered ${res.status} ${res.text}`);
}

export async function audit(
  ws: TestWorkspace,
  query: Record<string, string | number> = {},
): Promise<AuditPage> {
  const qs = new URLSearchParams(
    Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  const res = await ws.api.get(`/v1/moderation/audit${qs ? `?${qs}` : ''}`);
  if (res.status !== 200) throw new Error(`audit answered ${res.status} ${res.text}`);
  return res.body as AuditPage;
}

export interface LoggedEvent {
  type: string;
  channel_id: string | null;
  seq: number | null;
  payload: Record<string, unknown>;
}

/** The workspace's rows of one type in the event log (the outbox), in commit order. */
export async function loggedEvents(t: TestApp, workspaceId: string, type: string): Promise<LoggedEvent[]> {
  return t.app
    .get(DataSource)
    .query(
      `SELECT type, channel_id, seq, payload FROM events WHERE workspace_id = $1 AND type = $2 ORDER BY position`,
      [workspaceId, type],
    );
}

export const PROFANE = 'what the fuck is this';
export const MASKED = 'what the *** is this';
