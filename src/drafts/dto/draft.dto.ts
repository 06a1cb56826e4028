import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { IsMetadata } from '../../common/http/metadata';
import { IsOptionalNotNull } from '../../common/http/optional';
import { MAX_MENTIONS } from '../../messages/dto/send-message.dto';

/** PUT /v1/channels/:id/draft: the composer's state, checked as a send would be (not mute, bans, frozen, rates, moderation). */
export class SaveDraftDto {
  /** The text (or an attachment's caption). Empty or whitespace-only without an attachment deletes the draft (204). */
  @IsString() content!: string;

  /** The thread's root: a draft of a reply in that thread (one draft per thread beside the channel's own). */
  @IsOptional() @IsUUID('all', { message: 'thread_id must be a message id' }) thread_id?: string;

  /** Id of the quoted message (same channel). */
  @IsOptional() @IsUUID('all', { message: 'parent_id must be a message id' }) parent_id?: string;

  /** External ids of mentioned channel members (at most 50). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @IsString({ each: true })
  @Matches(EXTERNAL_ID_PATTERN, { each: true, message: `each mention ${EXTERNAL_ID_RULE}` })
  mentions?: string[];

  /** Must begin with the public attachment base URL, as a send's. */
  @IsOptional() @IsString() @MaxLength(2048) attachment_url?: string;

  /** A JSON object of at most 4 KiB. */
  @IsOptionalNotNull() @IsMetadata() metadata?: Record<string, unknown>;
}

/** `?thread_id=`: the draft of that thread; without it, the channel's own. */
export class DraftScopeDto {
  @ApiPropertyOptional({ format: 'uuid', description: "The thread's root; omit for the channel's own draft" })
  @IsOptional()
  @IsUUID('all', { message: 'thread_id must be a message id' })
  thread_id?: string;
}

export class MyDraftsQueryDto extends ListQueryDto {
  /** Only the drafts of this channel (id or external_id). */
  @IsOptional() @IsString() @MaxLength(200) channel?: string;
}

@ApiSchema({ name: 'Draft' })
export class DraftDto {
  @ApiProperty({ format: 'uuid' }) channel_id!: string;
  channel_external_id!: string;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "The thread's root; null for the channel's own draft",
  })
  thread_id!: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) parent_id!: string | null;
  content!: string;
  @ApiProperty({ type: String, nullable: true }) attachment_url!: string | null;
  /** External ids of the mentioned members. */
  @ApiProperty({ type: [String] }) mentions!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

@ApiSchema({ name: 'DraftList' })
export class DraftListDto {
  @ApiProperty({ type: [DraftDto] }) drafts!: DraftDto[];
  has_more!: boolean;
  @ApiProperty({ type: String, nullable: true }) next_cursor!: string | null;
}
