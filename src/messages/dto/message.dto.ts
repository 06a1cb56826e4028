import { LinkPreviewDto } from '../../previews/dto/preview.dto';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PageDto } from '../../common/http/page.dto';

/** Response schemas of the message object for the OpenAPI document. */

@ApiSchema({ name: 'MessageUser' })
export class MessageUserDto {
  id!: string;
  external_id!: string;
  name!: string | null;
  avatar_url!: string | null;
}

/** A user as events and pins name them. */
@ApiSchema({ name: 'UserRef' })
export class UserRefDto {
  id!: string;
  external_id!: string;
  name!: string | null;
}

@ApiSchema({ name: 'MessageAttachment' })
export class MessageAttachmentDto {
  url!: string;
  mime_type!: string;
  size_bytes!: number;
  filename!: string;
}

@ApiSchema({ name: 'QuotedMessage' })
export class QuotedMessageDto {
  id!: string;
  user_id!: string | null;
  user_name!: string | null;
  /** The first 180 Unicode code points of the parent's content ('' when it was unsent). */
  content!: string;
  type!: string;
  deleted!: boolean;
}

@ApiSchema({ name: 'Mention' })
export class MentionDto {
  user_id!: string;
  external_id!: string;
  name!: string | null;
}

@ApiSchema({ name: 'ReactionSummary' })
export class ReactionSummaryDto {
  emoji!: string;
  count!: number;
  reacted_by_me!: boolean;
}

/** CONTRACT §23: the viewing user's read state of a message's thread. */
@ApiSchema({ name: 'ThreadReadState' })
export class ThreadReadStateDto {
  /** The root's author, a replier, a mentioned user, or one who marked the thread unread. */
  participant!: boolean;
  /** Live replies after the user's cursor, not their own nor from users they block; 0 for a non-participant. */
  unread_replies!: number;
  /** The user's cursor in the thread; null when they have none. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_read_at!: string | null;
}

@ApiSchema({ name: 'PollOption' })
export class PollOptionDto {
  id!: string;
  text!: string;
  vote_count!: number;
}

/** CONTRACT §28: a poll; its message's `content` is the question. */
@ApiSchema({ name: 'Poll' })
export class PollDto {
  id!: string;
  question!: string;
  /** In the order they were given. */
  options!: PollOptionDto[];
  /** Votes cast: the sum of the options' vote_count (a multiple-choice voter casts several). */
  total_votes!: number;
  /** Users with a vote. */
  voter_count!: number;
  multiple_choice!: boolean;
  /** Nobody, the backend included, can list an anonymous poll's voters; poll.voted names no user. */
  anonymous!: boolean;
  /** When it closes by itself; null: only by hand. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  closes_at!: string | null;
  closed!: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  closed_at!: string | null;
  /** Null once that user is gone. */
  @ApiProperty({ type: UserRefDto, nullable: true })
  created_by!: UserRefDto | null;
  /** The option ids the calling user chose: in answers to a user token ([] for a backend key); never in realtime events or webhooks. */
  my_votes?: string[];
}

@ApiSchema({ name: 'Message' })
export class MessageDto {
  id!: string;
  channel_id!: string;
  channel_external_id!: string;
  /** The author's id; null for system messages and deleted users. */
  user_id!: string | null;
  @ApiProperty({ type: MessageUserDto, nullable: true })
  user!: MessageUserDto | null;
  /** '' when unsent. */
  content!: string;
  @ApiProperty({ enum: ['text', 'image', 'file', 'system', 'poll'] })
  type!: 'text' | 'image' | 'file' | 'system' | 'poll';
  attachment_url!: string | null;
  @ApiProperty({ type: MessageAttachmentDto, nullable: true })
  attachment!: MessageAttachmentDto | null;
  /** Custom data: a JSON object of at most 4 KiB; {} when none and once unsent. */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { order_id: 'o-42' } })
  metadata!: Record<string, unknown>;
  /** Only on replies. */
  parent_id?: string;
  /** Only on replies. */
  quoted_message?: QuotedMessageDto;
  /** Only when the message mentions someone. */
  mentions?: MentionDto[];
  /** Only on thread replies: the thread's root. */
  thread_id?: string;
  /** Only on thread replies: whether the reply is also shown in the channel's history. */
  show_in_channel?: boolean;
  /** On every message that is not a thread reply: its live replies (unsent ones excluded). */
  reply_count?: number;
  /** On every message that is not a thread reply: its latest reply's time, or null. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, required: false })
  last_reply_at?: string | null;
  /** On every message that is not a thread reply: the authors of replies, earliest first, at most 10. */
  thread_participants?: UserRefDto[];
  /**
   * On every message that is not a thread reply, shown to a user token (history, search, pins, threads,
   * the send answer): that user's read state of its thread. Never for a workspace key, in realtime
   * events or in webhooks.
   */
  thread?: ThreadReadStateDto;
  reactions!: ReactionSummaryDto[];
  /**
   * Previews of the first 3 links in the content, in their order there: [] until the worker fetched
   * them (a `message.updated` event then carries them), for a message sent with `skip_previews`, and
   * once unsent. An edit drops the previews of links it removes.
   */
  previews!: LinkPreviewDto[];
  /** Only on a message of type `poll`: its poll; null once the poll message is unsent. */
  @ApiProperty({ type: () => PollDto, nullable: true, required: false })
  poll?: PollDto | null;
  /** When the message was pinned; null when it is not pinned. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  pinned_at!: string | null;
  /** Who pinned it; null when it is not pinned, or when a backend key (or a since deleted user) pinned it. */
  @ApiProperty({ type: UserRefDto, nullable: true })
  pinned_by!: UserRefDto | null;
  /**
   * Present (true) only for a backend key, on a message sent while its author was shadow-banned
   *; nobody but its author sees such a message, and they are not told.
   */
  @ApiPropertyOptional({ enum: [true] })
  shadowed?: true;
  @ApiProperty({ enum: ['sent', 'delivered', 'read'] })
  receipt_status!: 'sent' | 'delivered' | 'read';
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  edited_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  deleted_at!: string | null;
}

/** A keyset page of messages (history, pins). */
@ApiSchema({ name: 'MessagePage' })
export class MessagePageDto extends PageDto {
  messages!: MessageDto[];
}
