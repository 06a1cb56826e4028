import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageDto } from '../../common/http/page.dto';
import { MessageDto, UserRefDto } from '../../messages/dto/message.dto';
import { REVIEW_ACTIONS, type ReviewAction } from '../../moderation/moderation-audit.repository';
import { UserDto } from '../../users/dto/user.dto';

/** Flags and the review queue. */

@ApiSchema({ name: 'Flag' })
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

@ApiSchema({ name: 'FlagResolution' })
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
@ApiSchema({ name: 'FlagEntry' })
export class FlagEntryDto {
  id!: string;
  @ApiProperty({ enum: ['message', 'user'] })
  target_type!: 'message' | 'user';
  /** Message entries: the message as history shows it to a backend key. */
  message?: MessageDto;
  /** User entries: the flagged user. */
  user?: UserDto;
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

@ApiSchema({ name: 'FlagEntryPage' })
export class FlagEntryPageDto extends PageDto {
  flags!: FlagEntryDto[];
}
