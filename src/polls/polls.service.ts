import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ChannelWriteContext, ChannelWrites, ChannelWriteSession } from '../channels/writes';
import type { WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { decodeTimeIdsCursor, pageOf } from '../common/pagination';
import { parseRfc3339 } from '../common/rfc3339';
import type { MessageView, PollView, UserRef } from '../contract/events';
import { EventLogService } from '../events/event-log.service';
import { exactTime, isoTime, rows } from '../infra/database/sql';
import { SendMessageDto } from '../messages/dto/send-message.dto';
import { MessageModeration } from '../messages/message-moderation';
import { broadcastPoll, MessageViews } from '../messages/message-view.service';
import { MessagesService, SendResult } from '../messages/messages.service';
import { CreatePollDto, PollVotesQueryDto } from './dto/poll.dto';

const MIN_AHEAD_MS = 1000;

interface PollRow {
  id: string;
  created_by: string | null;
  multiple_choice: boolean;
  anonymous: boolean;
  closed: boolean;
}

export interface PollVoteView {
  option_id: string;
  user: UserRef;
  created_at: string;
}

/**
 * Polls (CONTRACT §28). A poll is sent as a message of type `poll` (MessagesService's checks, in order,
 * with moderation of the question and of the options as one text), its rows written in the send's transaction.
 * Votes, withdrawals and closes run in the channel's write session with the poll row locked, so the
 * counters change exactly with the votes whatever runs at once; each change appends `poll.updated`
 * (realtime `message.updated` with its seq) and the webhook event (`poll.voted` / `poll.closed`).
 */
@Injectable()
export class PollsService {
  constructor(
    private readonly db: DataSource,
    private readonly messages: MessagesService,
    private readonly moderation: MessageModeration,
    private readonly writes: ChannelWrites,
    private readonly views: MessageViews,
    private readonly events: EventLogService,
  ) {}

  /** POST /v1/channels/:id/polls. */
  async create(p: WorkspacePrincipal, channelRef: string, dto: CreatePollDto): Promise<SendResult> {
    const question = dto.question.trim();
    if (!question) throw AppError.validation('question', 'must not be blank');
    const options = dto.options.map((o) => o.trim());
    if (options.some((o) => !o)) throw AppError.validation('options', 'must not be blank');
    if (new Set(options.map((o) => o.toLowerCase())).size !== options.length)
      throw AppError.validation('options', 'must be distinct, ignoring case and surrounding spaces');
    const closesAt = dto.closes_at === undefined ? null : this.closesAt(dto.closes_at);
    const pollId = newId();
    const optionIds = options.map(() => newId());
    const send = Object.assign(new SendMessageDto(), {
      content: question,
      thread_id: dto.thread_id,
      idempotency_key: dto.idempotency_key,
      user_external_id: dto.user_external_id,
    } satisfies SendMessageDto);
    return this.messages.send(p, channelRef, send, {
      addition: {
        type: 'poll',
        build: async (content, at) => {
          // the options as one text, a line each (they are single lines): one evaluation besides the question's
          const checked = await this.moderation.evaluate({
            workspaceId: p.workspaceId,
            channelId: at.channelId,
            channelExternalId: at.channelExternalId,
            userId: at.user.id,
            content: options.join('\n'),
            kind: 'send',
          });
          const masked = checked.content.split('\n');
          const texts = masked.length === options.length ? masked : options;
          const poll: PollView = {
            id: pollId,
            question: content,
            options: texts.map((text, i) => ({ id: optionIds[i]!, text, vote_count: 0 })),
            total_votes: 0,
            voter_count: 0,
            multiple_choice: dto.multiple_choice === true,
            anonymous: dto.anonymous === true,
            closes_at: closesAt && new Date(closesAt).toISOString(),
            closed: false,
            closed_at: null,
            created_by: { id: at.user.id, external_id: at.user.external_id, name: at.user.name },
            my_votes: [],
          };
          return {
            fields: { poll },
            write: async (m, messageId) => {
              await m.query(
                `WITH p AS (
                   INSERT INTO polls (id, workspace_id, message_id, created_by, question, multiple_choice, anonymous, closes_at, created_at)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, clock_timestamp()) RETURNING id)
                 INSERT INTO poll_options (id, poll_id, position, text)
                 SELECT o.id, (SELECT id FROM p), o.ord, o.text
                   FROM unnest($9::uuid[], $10::text[]) WITH ORDINALITY AS o(id, text, ord)`,
                [
                  pollId,
                  p.workspaceId,
                  messageId,
                  at.user.id,
                  content,
                  poll.multiple_choice,
                  poll.anonymous,
                  closesAt,
                  optionIds,
                  poll.options.map((o) => o.text),
                ],
              );
              await checked.record?.(m, messageId);
            },
          };
        },
      },
    });
  }

  /** PUT /v1/messages/:id/poll/vote: replaces the user's vote; the same options again change nothing. */
  async vote(
    p: WorkspacePrincipal,
    messageId: string,
    optionIds: string[],
    userExternalId?: string,
  ): Promise<MessageView> {
    if (new Set(optionIds).size !== optionIds.length)
      throw AppError.validation('option_ids', 'must not name an option twice');
    return this.change(p, messageId, userExternalId, optionIds);
  }

  /** DELETE /v1/messages/:id/poll/vote: withdraws the user's vote (none: a no-op). */
  withdraw(p: WorkspacePrincipal, messageId: string, userExternalId?: string): Promise<MessageView> {
    return this.change(p, messageId, userExternalId, []);
  }

  /** POST /v1/messages/:id/poll/close: its creator, a group admin or the backend; closed already: a no-op. */
  async close(p: WorkspacePrincipal, messageId: string): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'close_poll', { messageId });
    return this.writes.write(ctx, async (s) => {
      const poll = await this.locked(s.m, ctx);
      const actor = ctx.actor;
      const may =
        p.kind === 'backend' ||
        (actor !== null && poll.created_by === actor.id) ||
        (ctx.channel.type === 'group' && ctx.role === 'admin');
      if (!may)
        throw new AppError('FORBIDDEN', 'Only its creator, a group admin or the backend closes a poll');
      if (!poll.closed) {
        await s.m.query(`UPDATE polls SET closed_at = clock_timestamp() WHERE id = $1`, [poll.id]);
        await this.announceClose(s, ctx.message!.id);
      }
      return this.answer(s.m, p, ctx, messageId);
    });
  }

  /** GET /v1/messages/:id/poll/votes: newest first; an anonymous poll's voters are nobody's to see. */
  async votes(
    p: WorkspacePrincipal,
    messageId: string,
    q: PollVotesQueryDto,
  ): Promise<{ votes: PollVoteView[]; has_more: boolean; next_cursor: string | null }> {
    const ctx = await this.writes.read(p, null, 'list_votes', { messageId });
    this.writes.enforce(ctx);
    const [poll] = await rows<{ id: string; anonymous: boolean }>(
      this.db.manager,
      `SELECT id, anonymous FROM polls WHERE message_id = $1 AND workspace_id = $2`,
      [ctx.message!.id, ctx.workspaceId],
    );
    if (!poll) throw AppError.validation('message', 'is not a poll');
    if (poll.anonymous) throw new AppError('POLL_ANONYMOUS');
    const limit = q.limit ?? 50;
    const after = q.before ? this.cursor(q.before) : null;
    const found = await rows<PollVoteView & { key: string; user_id: string }>(
      this.db.manager,
      `SELECT v.option_id, v.user_id, json_build_object('id', u.id, 'external_id', u.external_id, 'name', u.name) AS user,
              ${isoTime('v.created_at')} AS created_at, ${exactTime('v.created_at')} AS key
         FROM poll_votes v JOIN users u ON u.id = v.user_id AND u.external_id IS NOT NULL
        WHERE v.poll_id = $1 AND ($2::uuid IS NULL OR v.option_id = $2::uuid)
          AND ($3::timestamptz IS NULL OR (v.created_at, v.user_id, v.option_id) < ($3::timestamptz, $4::uuid, $5::uuid))
        ORDER BY v.created_at DESC, v.user_id DESC, v.option_id DESC
        LIMIT $6`,
      [
        poll.id,
        q.option_id ?? null,
        after?.key ?? null,
        after?.user ?? null,
        after?.option ?? null,
        limit + 1,
      ],
    );
    const page = pageOf(found, limit, (r) => [r.key, r.user_id, r.option_id]);
    return {
      votes: page.items.map((r) => ({ option_id: r.option_id, user: r.user, created_at: r.created_at })),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /**
   * The scheduler's close of a poll at its `closes_at` (PollClosing), in the caller's transaction under
   * the channel's lock: false when it was closed (or unsent) meanwhile.
   */
  async closeDue(s: ChannelWriteSession, pollId: string, messageId: string): Promise<boolean> {
    const done = await rows<{ id: string }>(
      s.m,
      `UPDATE polls SET closed_at = closes_at WHERE id = $1 AND workspace_id = $2 AND closed_at IS NULL RETURNING id`,
      [pollId, s.workspaceId],
    );
    if (done.length) await this.announceClose(s, messageId);
    return done.length > 0;
  }

  private async change(
    p: WorkspacePrincipal,
    messageId: string,
    userExternalId: string | undefined,
    chosen: string[],
  ): Promise<MessageView> {
    const ctx = await this.writes.open(p, null, 'vote', { messageId, userExternalId });
    const voter = ctx.actor!;
    return this.writes.write(ctx, async (s) => {
      const poll = await this.locked(s.m, ctx);
      if (poll.closed) throw new AppError('POLL_CLOSED');
      const known = new Set(
        (await rows<{ id: string }>(s.m, `SELECT id FROM poll_options WHERE poll_id = $1`, [poll.id])).map(
          (o) => o.id,
        ),
      );
      if (chosen.some((id) => !known.has(id)))
        throw AppError.validation('option_ids', 'names an option this poll does not have');
      if (chosen.length && !poll.multiple_choice && chosen.length !== 1)
        throw AppError.validation('option_ids', 'must name exactly one option in a single-choice poll');
      const before = (
        await rows<{ option_id: string }>(
          s.m,
          `SELECT option_id FROM poll_votes WHERE poll_id = $1 AND user_id = $2`,
          [poll.id, voter.id],
        )
      ).map((r) => r.option_id);
      const same = before.length === chosen.length && chosen.every((id) => before.includes(id));
      if (!same) {
        // the counters move with the rows, in this transaction and under the poll row's lock
        await s.m.query(
          `WITH removed AS (DELETE FROM poll_votes WHERE poll_id = $1 AND user_id = $2 AND NOT (option_id = ANY($3::uuid[]))
                            RETURNING option_id),
                added AS (INSERT INTO poll_votes (poll_id, user_id, option_id, created_at)
                          SELECT $1, $2, x, clock_timestamp() FROM unnest($3::uuid[]) AS x
                          ON CONFLICT DO NOTHING RETURNING option_id),
                delta AS (SELECT option_id, sum(d)::int AS d
                            FROM (SELECT option_id, -1 AS d FROM removed UNION ALL SELECT option_id, 1 FROM added) c
                           GROUP BY option_id),
                counted AS (UPDATE poll_options o SET vote_count = o.vote_count + delta.d FROM delta WHERE o.id = delta.option_id)
           UPDATE polls SET total_votes = total_votes + (SELECT coalesce(sum(d), 0) FROM delta)::int,
                            voter_count = voter_count + $4
            WHERE id = $1`,
          [poll.id, voter.id, chosen, (chosen.length ? 1 : 0) - (before.length ? 1 : 0)],
        );
        const view = await this.answer(s.m, p, ctx, messageId);
        const broadcast = broadcastPoll(view.poll!);
        await this.announce(s, messageId, broadcast);
        await this.events.append(s.m, {
          workspaceId: s.workspaceId,
          type: 'poll.voted',
          payload: {
            ...this.about(s, messageId, broadcast),
            user: poll.anonymous ? null : { id: voter.id, external_id: voter.external_id, name: voter.name },
            option_ids: chosen,
          },
        });
        return view;
      }
      return this.answer(s.m, p, ctx, messageId);
    });
  }

  /** The poll of the context's message, its row locked for the rest of the transaction; 400 when it has none. */
  private async locked(m: EntityManager, ctx: ChannelWriteContext): Promise<PollRow> {
    const [poll] = await rows<PollRow>(
      m,
      `SELECT id, created_by, multiple_choice, anonymous,
              closed_at IS NOT NULL OR coalesce(closes_at <= statement_timestamp(), false) AS closed
         FROM polls WHERE message_id = $1 AND workspace_id = $2 FOR UPDATE`,
      [ctx.message!.id, ctx.workspaceId],
    );
    if (!poll) throw AppError.validation('message', 'is not a poll');
    return poll;
  }

  /** The message as the caller sees it: a user their own my_votes, the backend []. */
  private async answer(
    m: EntityManager,
    p: WorkspacePrincipal,
    ctx: ChannelWriteContext,
    messageId: string,
  ): Promise<MessageView> {
    const view = await this.views.renderOne(
      m,
      { workspaceId: ctx.workspaceId, userId: p.kind === 'user' ? ctx.actor!.id : null },
      ctx.message?.id ?? messageId,
    );
    if (!view) throw AppError.notFound('Message');
    return view;
  }

  private async announceClose(s: ChannelWriteSession, messageId: string): Promise<void> {
    const view = await this.views.renderOne(
      s.m,
      { workspaceId: s.workspaceId, userId: null, broadcast: true },
      messageId,
    );
    if (!view?.poll) return;
    await this.announce(s, messageId, view.poll);
    await this.events.append(s.m, {
      workspaceId: s.workspaceId,
      type: 'poll.closed',
      payload: this.about(s, messageId, view.poll),
    });
  }

  /** Realtime `message.updated` `{id, channel_id, poll}` with the channel's next seq (no webhook). */
  private async announce(s: ChannelWriteSession, messageId: string, poll: PollView): Promise<void> {
    await s.append('poll.updated', {
      message: { id: messageId, channel_id: s.channel.id, channel_external_id: s.channel.external_id, poll },
    });
  }

  private about(s: ChannelWriteSession, messageId: string, poll: PollView) {
    return {
      poll_id: poll.id,
      message_id: messageId,
      channel_id: s.channel.id,
      channel_external_id: s.channel.external_id,
      poll,
    };
  }

  private closesAt(value: string): string {
    const instant = parseRfc3339(value);
    const at = instant ? Date.parse(instant.utc) : NaN;
    const yearAhead = new Date();
    yearAhead.setUTCFullYear(yearAhead.getUTCFullYear() + 1);
    if (!instant || !(at - Date.now() >= MIN_AHEAD_MS && at <= yearAhead.getTime()))
      throw AppError.validation('closes_at', 'must be an RFC 3339 time 1 second to 1 year ahead');
    return instant.utc;
  }

  private cursor(value: string): { key: string; user: string; option: string } {
    const { key, ids } = decodeTimeIdsCursor(value, 2);
    return { key, user: ids[0]!, option: ids[1]! };
  }
}
