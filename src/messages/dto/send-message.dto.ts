import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsMetadata } from '../../common/http/metadata';
import { IsRfc3339 } from '../../common/http/rfc3339';
import { IsOptionalNotNull } from '../../common/http/optional';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

export const MAX_MENTIONS = 50;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 128;

/**
 * The send body. Only the shape is checked here; the rules that depend on the channel
 * (parent, mentions, attachment URL, empty content) run in the service, in the contract's check order.
 */
export class SendMessageDto {
  /** Text, or the caption of an attachment. May be empty only with an attachment. */
  @IsOptional() @IsString() content?: string;

  /** Must begin with the public attachment base URL (SERVICE_S3_PUBLIC_URL). */
  @IsOptional() @IsString() @MaxLength(2048) attachment_url?: string;

  /** Id of the quoted message (same channel). */
  @IsOptional() @IsString() @MaxLength(64) parent_id?: string;

  /** Makes the message a reply in the thread of this root (same channel, not itself a reply). */
  @IsOptional() @IsString() @MaxLength(64) thread_id?: string;

  /** With thread_id: also show the reply in the channel's history (default false). */
  @IsOptional() @IsBoolean() show_in_channel?: boolean;

  /** Custom data returned with the message everywhere: a JSON object of at most 4 KiB. */
  @IsOptionalNotNull() @IsMetadata() metadata?: Record<string, unknown>;

  /** External ids of mentioned channel members (at most 50). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @IsString({ each: true })
  @Matches(EXTERNAL_ID_PATTERN, { each: true, message: `each mention ${EXTERNAL_ID_RULE}` })
  mentions?: string[];

  /** Makes the send retryable: (sender, idempotency_key) is unique forever. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(MAX_IDEMPOTENCY_KEY_LENGTH) idempotency_key?: string;

  /**
   * Send later (CONTRACT §25): an RFC 3339 time 1 second to 30 days ahead. The answer is then 202
   * `{scheduled_message}`, and the message is sent at that time as a normal send by its author. REST only
   * (the socket's `message.send` refuses it), never with `system: true`.
   */
  @ApiPropertyOptional({ type: String, format: 'date-time', example: '2026-12-01T09:00:00Z' })
  @IsOptional()
  @IsRfc3339('scheduled_at')
  scheduled_at?: string;

  /** CONTRACT §26: fetch no link previews for this message (nor after an edit of it). */
  @IsOptional() @IsBoolean() skip_previews?: boolean;

  /** Backend keys: call the workspace's pre-send hook for this send too (a user's own sends always do). */
  @IsOptional() @IsBoolean() run_hooks?: boolean;

  /** Backend keys only (and required there): the user the backend sends as. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}

/** POST /v1/messages: the backend form, naming the channel in the body. */
export class BackendSendMessageDto extends SendMessageDto {
  /** The channel's id or external_id. */
  @IsString() @MinLength(1) @MaxLength(200) channel_id!: string;

  /** A server-generated system message: no sender, exempt from rate limits, mutes and moderation. */
  @IsOptional() @IsBoolean() system?: boolean;
}

export class EditMessageDto {
  /** The new content; omitted, it is kept (a metadata-only edit). A poll's content (its question) cannot change. */
  @IsOptionalNotNull() @IsString() content?: string;

  /** Replaces the message's metadata (a JSON object of at most 4 KiB); omitted, it is kept. */
  @IsOptionalNotNull() @IsMetadata() metadata?: Record<string, unknown>;
}
