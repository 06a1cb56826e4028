import type { EntityManager } from 'typeorm';
import { newId } from '../../common/ids';
import { EventLogService } from '../../events/event-log.service';
import { HAS_EVENTS, PUBLISH_NOTES } from '../../events/event-notifier';
import type { DomainEventMap, DomainEventType } from '../../contract/events';
import type { PublishNote } from '../../events/publish-notes';
import { CHANNEL_COLUMNS, ChannelRow } from '../channels.repository';
import { largeChannelSql } from '../../workspaces/workspace-settings';
import { OutgoingEvent, OutgoingMessage, SendOutcome, sendMessage } from './send-statement';

/** The events about one member of a channel (CONTRACT §29 addresses them differently in a large channel). */
export type MemberEventType = 'member.joined' | 'member.left' | 'member.role_changed';

/**
 * One channel's writes inside a transaction that holds its order lock. Only a session can append a
 * channel event, so every channel event takes the next `seq` in commit order.
 */
export class ChannelWriteSession {
  constructor(
    readonly m: EntityManager,
    readonly channel: ChannelRow,
    private readonly events: EventLogService,
  ) {}

  get workspaceId(): string {
    return this.channel.workspace_id;
  }

  /** Appends a channel event (the channel's next seq), committed with the transaction. */
  async append<T extends DomainEventType>(
    type: T,
    payload: DomainEventMap[T],
    audience?: string[],
  ): Promise<void> {
    await this.events.appendToChannel(this.m, {
      workspaceId: this.channel.workspace_id,
      channelId: this.channel.id,
      type,
      payload,
      audience,
    });
  }

  /**
   * Member events, each about the member its payload names. In a channel that is not large, channel
   * events (the next seqs, to every member; a join or leave addressed to its member too, whose sockets
   * move). In a large channel (CONTRACT §29, decided after the change, in this transaction, with one
   * query for all of them) workspace events with no seq addressed to that member and the channel's
   * admins: the other members are not told, and their seqs have no gap to fill.
   */
  async appendMemberEvents<T extends MemberEventType>(type: T, payloads: DomainEventMap[T][]): Promise<void> {
    if (!payloads.length) return;
    const [row] = await this.m.query<{ admins: string[] | null }[]>(
      `SELECT CASE WHEN ${largeChannelSql('c', 'w.settings')}
                   THEN ARRAY(SELECT cm.user_id FROM channel_members cm WHERE cm.channel_id = c.id AND cm.role = 'admin') END AS admins
         FROM channels c JOIN workspaces w ON w.id = c.workspace_id WHERE c.id = $1`,
      [this.channel.id],
    );
    const admins = row?.admins;
    for (const payload of payloads) {
      const member = payload.user_id;
      if (!admins) await this.append(type, payload, type === 'member.role_changed' ? undefined : [member]);
      else
        await this.events.append(this.m, {
          workspaceId: this.channel.workspace_id,
          type,
          payload,
          audience: [...new Set([member, ...admins])],
        });
    }
  }

  /** Appends several channel events in one statement, in order (the channel's next seqs). */
  async appendMany(events: OutgoingEvent[]): Promise<void> {
    await this.events.appendManyToChannel(this.m, this.channel.workspace_id, this.channel.id, events);
  }

  /** The channel row re-read within the transaction (after a change to it). */
  async reload(): Promise<ChannelRow> {
    const found: ChannelRow[] = await this.m.query(
      `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.id = $1`,
      [this.channel.id],
    );
    return found[0]!;
  }

  /** Persists a message and its events within this transaction (the same statement `ChannelWrites.send` runs). */
  async sendMessage(msg: OutgoingMessage, events: OutgoingEvent[]): Promise<SendOutcome> {
    const out = await sendMessage(this.m, {
      workspaceId: this.channel.workspace_id,
      channelId: this.channel.id,
      msg,
      events,
      ids: events.map(() => newId()),
    });
    if (out.outcome === 'sent' && events.length && this.m.queryRunner) {
      // told with the commit: nobody published these live, the log's publisher does (at once)
      const data = this.m.queryRunner.data as Record<string, unknown>;
      data[HAS_EVENTS] = true;
      const notes = ((data[PUBLISH_NOTES] as PublishNote[] | undefined) ??= []);
      notes.push({ channel: this.channel.id, first: out.first_seq, count: events.length, live: false });
    }
    return out;
  }
}
