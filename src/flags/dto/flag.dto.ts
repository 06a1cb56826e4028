import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { IsOptionalNotNull } from '../../common/http/optional';
import { MAX_BAN_SECONDS } from '../../bans/dto/ban.dto';
import { REVIEW_ACTIONS, type ReviewAction } from '../../moderation/moderation-audit.repository';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

/** POST /v1/messages/:id/flag and /v1/users/:external_id/flag. */
export class CreateFlagDto {
  /** Why, in the reporter's words (at most 500 characters). */
  @IsOptional() @IsString() @MaxLength(500) reason?: string;

  /** Backend keys only (and required there): the user who reports. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}

/** GET /v1/moderation/flags. */
export class FlagQueueQueryDto extends ListQueryDto {
  /** `open` (the default): oldest first; `resolved`: most recently resolved first. */
  @IsOptional() @IsIn(['open', 'resolved']) status?: 'open' | 'resolved';
}

/** POST /v1/moderation/flags/:id/resolve. */
export class ResolveFlagDto {
  /**
   * `dismiss` closes the entry; `unsend_message` unsends the message (message entries only);
   * `ban_user` / `shadow_ban_user` ban the flagged user, or the message's author, workspace-wide.
   */
  @IsIn(REVIEW_ACTIONS) action!: ReviewAction;

  /** With `ban_user` / `shadow_ban_user` only: how long the ban lasts; omitted = until it is lifted. */
  @IsOptionalNotNull() @IsInt() @Min(1) @Max(MAX_BAN_SECONDS) duration_seconds?: number;
}
