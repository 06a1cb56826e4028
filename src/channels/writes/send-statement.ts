import type { EntityManager } from 'typeorm';
import { AppError } from '../../common/errors/app-error';
import type { StoredEvent } from '../../events/event-types';
import type { DomainEventMap, DomainEventType } from '../../contract/events';
import type { LiveMessage } from '../../events/live-publish';
import { prepared } from '../../infra/database/prepared';
import { activeTraceparent } from '../../ops/tracing/tracing';

/** A message to persist through `chat_send_message`. */
export interface OutgoingMessage {
  /** The id it gets when one was made before (the pre-send hook was told it, CONTRACT §27); else null. */
  id: string | null;
  /** Leave the sender's draft (a scheduled message took it when it was scheduled, CONTRACT §24). */
  keepDraft: boolean;
  userId: string | null;
  senderKey: string;
  type: string;
  content: string;
  attachmentUrl: string | null;
  attachment: unknown;
  parentId: string | null;
  idempotencyKey: string | null;
  mentionIds: string[];
  /** The thread's root (CONTRACT §15); null for a message of the channel itself. */
  threadId: string | null;
  /** A thread reply also shown in the channel (ignored without threadId). */
  showInChannel: boolean;
  /** CONTRACT §17's message metadata; null for none. */
  metadata: Record<string, unknown> | null;
  /** A user's own send through a JWT: the function applies frozen and slow mode under the lock. */
  byUser: boolean;
  /** The author is shadow-banned (CONTRACT §19): stored, shown to them and the backend, counted nowhere. */
  shadowed: boolean;
}

/**
 * An event of a new message. The function sets the id and the stored instant it made into the payload's
 * `message.id` and `message.created_at` (or `message_id`): build it with PENDING_MESSAGE_ID.
 */
export type OutgoingEvent<T extends DomainEventType = DomainEventType> = {
  [K in T]: { type: K; payload: DomainEventMap[K] };
}[T];

/** Stands in for a new message's id in its events until chat_send_message sets the id it made. */
export const PENDING_MESSAGE_ID = '00000000-0000-7000-8000-000000000000';

export type SendOutcome =
  | Sent
  | { outcome: 'replay'; id: string }
  | { outcome: 'slow_mode'; retryAfterMs: number }
  | { outcome: 'not_member' | 'gone' | 'no_root' | 'frozen' };

/** A committed send: the message's id and stored instant (ISO), and the seq of its first event. */
export interface Sent {
  outcome: 'sent';
  id: string;
  created_at: string;
  first_seq: number;
}

/** What a send publishes live, from its committed events as stored (null: leave them to the log's publisher). */
export type LiveRender = (sent: Sent, stored: StoredEvent[]) => LiveMessage | null;

/**
 * The error of a send chat_send_message refused under the channel's lock. Membership and frozen were
 * decided before by `enforce` and are re-checked there because the send is one statement; slow mode is
 * decided only there.
 */
export function refusalOf(out: Exclude<SendOutcome, Sent | { outcome: 'replay' }>): AppError {
  switch (out.outcome) {
    case 'not_member': // membership changed since the first check
      return new AppError('NOT_A_MEMBER');
    case 'gone':
      return AppError.notFound('Channel');
    case 'frozen': // frozen since the first check
      return new AppError('CHANNEL_FROZEN');
    case 'slow_mode': {
      const seconds = Math.max(1, Math.ceil(out.retryAfterMs / 1000));
      return new AppError(
        'SLOW_MODE',
        `Slow mode: wait ${seconds} s before sending again in this channel`,
        undefined,
        seconds,
      );
    }
    case 'no_root': // the root went (or was never a root) since the validation read it
      return AppError.validation('thread_id', 'no such thread root in this channel');
  }
}

/**
 * A committed send's events as chat_send_message stored them: the message's id and instant set into
 * `message.id` / `message.created_at` (or `message_id`), the seqs from the first. A thread root's
 * counters (thread.updated) are only in the stored row: such a send is left to the log's publisher.
 */
export function storedEvents(
  where: { workspaceId: string; channelId: string },
  sent: Sent,
  events: OutgoingEvent[],
  ids: string[],
): StoredEvent[] {
  const at = new Date(sent.created_at);
  const record = {
    position: 0,
    tx_id: '0',
    workspace_id: where.workspaceId,
    channel_id: where.channelId,
    audience: null,
    created_at: at,
  };
  return events.map((e, i): StoredEvent => {
    const stored = { ...record, id: ids[i]!, seq: sent.first_seq + i };
    if (e.type === 'message.created')
      return {
        ...stored,
        type: e.type,
        payload: { message: { ...e.payload.message, id: sent.id, created_at: sent.created_at } },
      };
    if (e.type === 'message.mentioned')
      return { ...stored, type: e.type, payload: { ...e.payload, message_id: sent.id } };
    return { ...stored, ...e };
  });
}

/** One send of a batch: where, what, and its events' ids. */
export interface SendRequest {
  workspaceId: string;
  channelId: string;
  msg: OutgoingMessage;
  events: OutgoingEvent[];
  ids: string[];
}

interface OutcomeRow {
  outcome: SendOutcome['outcome'];
  message_id: string | null;
  created_at: string | null;
  first_seq: string | null;
  retry_after_ms: string | null;
}

/** A send as one statement: `chat_send_message` (its events keep the active span's traceparent, tracing on). */
export async function sendMessage(m: EntityManager, r: SendRequest): Promise<SendOutcome> {
  const { msg, events } = r;
  const found = await prepared<OutcomeRow>(
    m,
    `SELECT * FROM chat_send_message($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
    [
      r.channelId,
      r.workspaceId,
      msg.userId,
      msg.senderKey,
      msg.type,
      msg.content,
      msg.attachmentUrl,
      msg.attachment === null ? null : JSON.stringify(msg.attachment),
      msg.parentId,
      msg.idempotencyKey,
      msg.mentionIds,
      msg.threadId,
      msg.threadId !== null && msg.showInChannel,
      msg.metadata === null ? null : JSON.stringify(msg.metadata),
      msg.byUser,
      msg.shadowed,
      r.ids,
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.payload)),
      msg.id,
      msg.keepDraft,
      activeTraceparent(),
    ],
  );
  if (!found[0]) throw new Error('chat_send_message answered nothing');
  return outcomeOf(found[0]);
}

/** What a batch answered for one of its sends: its outcome, `busy` (left for a statement of its own), or an error of its own. */
export type BatchOutcome = SendOutcome | 'busy' | Error;

/**
 * Several sends as one statement and one commit: `chat_send_messages`, which tries every channel's
 * order lock first, then sends each message as `chat_send_message` does, in the batch's order. One
 * answer per send, in that order. The statement committed whatever it answered: an answer that makes
 * no sense fails only its own send.
 */
export async function sendMessages(
  m: EntityManager,
  batch: SendRequest[],
  /** Each send's traceparent (tracing on: the statement runs in no one request's span). */
  traceparents?: (string | null)[],
): Promise<BatchOutcome[]> {
  const channels = [...new Set(batch.map((r) => r.channelId))].sort();
  const found = await prepared<OutcomeRow & { ord: number }>(m, `SELECT * FROM chat_send_messages($1, $2)`, [
    channels,
    JSON.stringify(
      batch.map(({ workspaceId, channelId, msg, events, ids }, i) => ({
        channel: channelId,
        workspace: workspaceId,
        id: msg.id,
        keep_draft: msg.keepDraft,
        user: msg.userId,
        sender_key: msg.senderKey,
        type: msg.type,
        content: msg.content,
        attachment_url: msg.attachmentUrl,
        attachment: msg.attachment,
        parent: msg.parentId,
        idempotency_key: msg.idempotencyKey,
        mentions: msg.mentionIds,
        thread: msg.threadId,
        show_in_channel: msg.threadId !== null && msg.showInChannel,
        metadata: msg.metadata,
        by_user: msg.byUser,
        shadowed: msg.shadowed,
        event_ids: ids,
        event_types: events.map((e) => e.type),
        payloads: events.map((e) => e.payload),
        traceparent: traceparents?.[i] ?? undefined,
      })),
    ),
  ]);
  const answers: BatchOutcome[] = batch.map(
    () => new Error('chat_send_messages answered nothing for this send'),
  );
  for (const r of found) {
    const i = Number(r.ord) - 1;
    if (!(i >= 0 && i < answers.length)) continue;
    try {
      answers[i] = (r.outcome as string) === 'busy' ? 'busy' : outcomeOf(r);
    } catch (e) {
      answers[i] = e as Error;
    }
  }
  return answers;
}

function outcomeOf(r: OutcomeRow): SendOutcome {
  switch (r.outcome) {
    case 'sent':
      return {
        outcome: 'sent',
        id: r.message_id!,
        created_at: r.created_at!,
        first_seq: Number(r.first_seq),
      };
    case 'replay':
      if (!r.message_id) throw new Error('idempotency conflict without a row');
      return { outcome: 'replay', id: r.message_id };
    case 'slow_mode':
      return { outcome: 'slow_mode', retryAfterMs: Number(r.retry_after_ms) };
    case 'not_member':
    case 'gone':
    case 'no_root':
    case 'frozen':
      return { outcome: r.outcome };
  }
}
