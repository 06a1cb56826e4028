import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelMembersRepository } from '../channels/channel-members.repository';
import type { ChannelRow } from '../channels/channels.repository';
import { AppError, ErrorDetail } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import type { MentionRef, QuotedMessagePayload } from '../contract/events';
import { SendMessageDto } from './dto/send-message.dto';
import { MessageAttachments } from './message-attachments';
import type { MessageType, MessageView } from '../contract/events';
import { MessagesRepository } from './messages.repository';

/** A validated send, ready to persist. */
export interface Draft {
  type: MessageType;
  content: string;
  attachmentUrl: string | null;
  attachment: MessageView['attachment'];
  parentId: string | null;
  /** The parent as the reply quotes it (read with the parent check). */
  quote: QuotedMessagePayload | null;
  mentions: MentionRef[];
  /** The thread's root (CONTRACT §15), and whether the reply is also shown in the channel. */
  threadId: string | null;
  showInChannel: boolean;
}

/** The content rules of a send (and an edit's size), apart from the order they run in. */
@Injectable()
export class MessageRules {
  constructor(
    private readonly db: DataSource,
    private readonly repo: MessagesRepository,
    private readonly members: ChannelMembersRepository,
    private readonly attachments: MessageAttachments,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** 413 MESSAGE_TOO_LARGE over SERVICE_MAX_MESSAGE_SIZE_BYTES, counted in UTF-8 bytes. */
  checkSize(content: string): void {
    const max = this.config.SERVICE_MAX_MESSAGE_SIZE_BYTES;
    const size = Buffer.byteLength(content, 'utf8');
    if (size > max)
      throw new AppError(
        'MESSAGE_TOO_LARGE',
        `The content is ${size} bytes; the limit is ${max} bytes (UTF-8)`,
      );
  }

  /** Parent, mentions and attachment (the validation step of the send order): every problem at once, as one 400. */
  async validate(
    workspaceId: string,
    channel: ChannelRow,
    dto: SendMessageDto,
    content: string,
    system: boolean,
  ): Promise<Draft> {
    const details: ErrorDetail[] = [];
    const m = this.db.manager;
    if (!content.trim() && !dto.attachment_url)
      details.push({ field: 'content', message: 'must not be empty without an attachment' });

    let parentId: string | null = null;
    let quote: QuotedMessagePayload | null = null;
    if (dto.parent_id !== undefined) {
      const parent = isUuid(dto.parent_id) ? await this.repo.parent(m, workspaceId, dto.parent_id) : null;
      if (parent === null) details.push({ field: 'parent_id', message: 'no such message' });
      else if (parent.channel_id !== channel.id)
        details.push({ field: 'parent_id', message: 'the quoted message is in another channel' });
      else {
        parentId = dto.parent_id;
        quote = parent.quote;
      }
    }

    let threadId: string | null = null;
    if (dto.thread_id !== undefined) {
      const root = isUuid(dto.thread_id) ? await this.repo.threadRoot(m, workspaceId, dto.thread_id) : null;
      if (root === null) details.push({ field: 'thread_id', message: 'no such message' });
      else if (root.channel_id !== channel.id)
        details.push({ field: 'thread_id', message: 'the thread root is in another channel' });
      else if (root.thread_id !== null)
        details.push({
          field: 'thread_id',
          message: 'is a thread reply; reply to its root instead (threads do not nest)',
        });
      else threadId = dto.thread_id;
    } else if (dto.show_in_channel === true) {
      details.push({ field: 'show_in_channel', message: 'is only for thread replies (with thread_id)' });
    }

    const mentions: MentionRef[] = [];
    if (dto.mentions?.length) {
      const members = new Map(
        (await this.members.byExternalIds(m, workspaceId, channel.id, dto.mentions)).map((u) => [
          u.external_id,
          u,
        ]),
      );
      const seen = new Set<string>();
      dto.mentions.forEach((externalId, i) => {
        const user = members.get(externalId);
        if (!user)
          details.push({ field: `mentions[${i}]`, message: `${externalId} is not a member of this channel` });
        else if (!seen.has(externalId)) {
          seen.add(externalId);
          mentions.push({ user_id: user.id, external_id: user.external_id, name: user.name });
        }
      });
    }

    const url = dto.attachment_url ?? null;
    if (url !== null && !this.isPublicFileUrl(url)) {
      details.push({ field: 'attachment_url', message: `must begin with ${this.config.publicFilesUrl}` });
    }
    if (details.length)
      throw new AppError('VALIDATION_ERROR', `${details[0]!.field}: ${details[0]!.message}`, details);

    let type: MessageType = system ? 'system' : 'text';
    let attachment: Draft['attachment'] = null;
    if (url !== null) {
      const resolved = await this.attachments.resolve(m, workspaceId, url);
      attachment = resolved.attachment;
      if (!system) type = resolved.type;
    }
    return {
      type,
      content,
      attachmentUrl: url,
      attachment,
      parentId,
      quote,
      mentions,
      threadId,
      showInChannel: threadId !== null && dto.show_in_channel === true,
    };
  }

  /** The URL begins with the public base URL, also once normalised (no `..` escaping it). */
  private isPublicFileUrl(url: string): boolean {
    const base = this.config.publicFilesUrl;
    if (!url.startsWith(base) || url.length === base.length) return false;
    try {
      return new URL(url).href.startsWith(base);
    } catch {
      return false;
    }
  }
}
