import { ApiProperty } from '@nestjs/swagger';
import { MessageDto, UserRefDto } from '../../messages/dto/message.dto';
import { REVIEW_ACTIONS, type ReviewAction } from '../../moderation/moderation-audit.repository';

/** OpenAPI schemas of flags and the review queue (CONTRACT §19): documentation only. */

export class FlagDto {
  id!: string;
  @ApiProperty({ enum: ['message', 'user'] })
  target_type!: 'message' | 'user';
  /** Message flags only. */
  message_id?: string;
  /** The flagged user, or the message's author (null once the author was deleted). */
  @ApiProperty({ type: String, nullable: true })
  user_id!: string | null;
  /** The reporter; null for automatic moderation's flags. */
  @ApiProperty({ type: UserRefDto, nullable: true })
  by_user!: UserRefDto | null;
  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
}

/** The user object of CONTRACT §5. */
export class FlaggedUserDto {
  id!: string;
  external_id!: string;
  name!: string | null;
  avatar_url!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

export class FlagResolutionDto {
  @ApiProperty({ enum: REVIEW_ACTIONS })
  action!: ReviewAction;
  @ApiProperty({ type: String, format: 'date-time' })
  resolved_at!: string;
  /** The ban's length for `ban_user` / `shadow_ban_user` with a duration; null otherwise. */
  @ApiProperty({ type: Number, nullable: true })
  duration_seconds!: number | null;
}

/** One entry of the review queue: one target (a message or a user) and the flags of one review cycle. */
export class FlagEntryDto {
  id!: string;
  @ApiProperty({ enum: ['message', 'user'] })
  target_type!: 'message' | 'user';
  /** Message entries: the message as history shows it to a backend key. */
  message?: MessageDto;
  /** User entries: the flagged user. */
  user?: FlaggedUserDto;
  /** Flags of this entry, automatic moderation's included. */
  flag_count!: number;
  /** The distinct reasons given, earliest first (at most 50). */
  reasons!: string[];
  @ApiProperty({ type: String, format: 'date-time' })
  first_flagged_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  last_flagged_at!: string;
  @ApiProperty({ enum: ['open', 'resolved'] })
  status!: 'open' | 'resolved';
  /** Resolved entries only. */
  resolution?: FlagResolutionDto;
}

export class FlagEntryPageDto {
  flags!: FlagEntryDto[];
  has_more!: boolean;
  /** Pass as `before` for the next page; null when `has_more` is false. */
  next_cursor!: string | null;
}
