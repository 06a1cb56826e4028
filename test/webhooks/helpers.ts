import { createHmac } from 'crypto';
import type { TestWorkspace } from '../support/fixtures';
import type { ReceivedRequest } from '../support/receiver';

export interface Delivery {
  id: string;
  event_id: string;
  event: string;
  status: string;
  attempts: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  signing: string;
  signing_secret?: string | null;
  consecutive_failures: number;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export function expectedSignature(secret: string, timestamp: string, raw: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest('hex')}`;
}

export async function createWebhook(
  ws: TestWorkspace,
  url: string,
  events: string[],
  extra: Record<string, unknown> = {},
): Promise<Webhook> {
  const res = await ws.api.post('/v1/webhooks', { url, events, ...extra });
  if (res.status !== 201) throw new Error(`create webhook answered ${res.status} ${res.text}`);
  return res.body as Webhook;
}

export async function getWebhook(ws: TestWorkspace, id: string): Promise<Webhook> {
  const res = await ws.api.get(`/v1/webhooks/${id}`);
  if (res.status !== 200) throw new Error(`GET webhook answered ${res.status} ${res.text}`);
  return res.body as Webhook;
}

export async function listDeliveries(ws: TestWorkspace, webhookId: string, query = ''): Promise<Delivery[]> {
  const res = await ws.api.get(`/v1/webhooks/${webhookId}/deliveries?limit=100${query}`);
  if (res.status !== 200) throw new Error(`GET deliveries answered ${res.status} ${res.text}`);
  return (res.body as { deliveries: Delivery[] }).deliveries;
}

export async function poll<T>(
  fn: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 15_000,
  intervalMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    last = await fn();
    if (last) return last as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export async function waitDeliveries(
  ws: TestWorkspace,
  webhookId: string,
  pred: (l: Delivery[]) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<Delivery[]> {
  let last: Delivery[] = [];
  try {
    return await poll(
      async () => {
        last = await listDeliveries(ws, webhookId);
        return pred(last) ? last : null;
      },
      what,
      timeoutMs,
      150,
    );
  } catch {
    throw new Error(
      `${what}: last deliveries ${JSON.stringify(last.map((d) => ({ status: d.status, attempts: d.attempts, rs: d.response_status, error: d.error })))}`,
    );
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const eventOf = (r: ReceivedRequest) => r.headers['x-service-event'] as string | undefined;

/** A user.created event source: PUT /v1/users/:id creates the user. Returns the user id. */
export async function provision(ws: TestWorkspace, externalId: string): Promise<string> {
  const res = await ws.api.put(`/v1/users/${externalId}`, { name: externalId.toUpperCase() });
  if (res.status !== 201) throw new Error(`PUT user answered ${res.status} ${res.text}`);
  return (res.body as { id: string }).id;
}

export const forUser = (externalId: string) => (r: ReceivedRequest) =>
  r.json?.data?.user?.external_id === externalId;
