import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { AUDIT_RULES } from '../moderation-audit.repository';

export class AuditQueryDto extends ListQueryDto {
  /** Only entries about this user (external id). */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(128) user?: string;

  /** Only entries in this channel (id or external_id). */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) channel?: string;

  /** Only entries of this rule: profanity, link, phone or flood, or `review` for resolutions of flags. */
  @IsOptional() @IsIn(AUDIT_RULES) rule?: (typeof AUDIT_RULES)[number];
}
