import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageDto } from '../../common/http/page.dto';

/** One entry of the moderation audit trail. */
@ApiSchema({ name: 'AuditEntry' })
export class AuditEntryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  /** null for the resolution of a user's flags entry */
  channel_id!: string | null;
  user_id!: string | null;
  message_id!: string | null;
  /** profanity, link, phone, flood, or `review` for resolutions of flags */
  rule!: string;
  /** flag, mask, reject, auto_mute, or a review action (dismiss, unsend_message, ban_user, shadow_ban_user) */
  action!: string;
  /** The start of the content concerned */
  excerpt!: string;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

@ApiSchema({ name: 'AuditPage' })
export class AuditPageDto extends PageDto {
  entries!: AuditEntryDto[];
}
