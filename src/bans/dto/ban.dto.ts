import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { PageDto } from '../../common/http/page.dto';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

/** Ten years: "for a while" in any app; leave `duration_seconds` out for a ban until lifted. */
export const MAX_BAN_SECONDS = 10 * 365 * 86400;

/** POST /v1/users/:external_id/ban. */
export class BanDto {
  /** Shown to moderators (GET /v1/bans, webhooks) and in the user's data export (which goes to the backend). */
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;

  /** How long the ban lasts; omitted = until it is lifted. */
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_BAN_SECONDS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_BAN_SECONDS)
  duration_seconds?: number;

  /** A shadow ban: the user's sends succeed but nobody else sees them. */
  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  shadow?: boolean;
}

/** POST /v1/channels/:id/bans and /v1/me/channels/:id/bans. */
export class ChannelBanDto extends BanDto {
  @ApiProperty({ pattern: EXTERNAL_ID_PATTERN.source })
  @IsString()
  @MinLength(1)
  @Matches(EXTERNAL_ID_PATTERN, { message: EXTERNAL_ID_RULE })
  user_external_id!: string;
}

export class BanListQueryDto extends ListQueryDto {
  /** Only the bans of this channel (id or external_id); without it, every ban of the workspace. */
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  channel?: string;
}

@ApiSchema({ name: 'BannedUser' })
export class BannedUserDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() external_id!: string;
  @ApiProperty({ type: String, nullable: true }) name!: string | null;
}

/** A ban in force. */
@ApiSchema({ name: 'Ban' })
export class BanViewDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ type: BannedUserDto }) user!: BannedUserDto;
  /** Null for a workspace-wide ban. */
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) channel_id!: string | null;
  @ApiProperty({ type: String, nullable: true }) channel_external_id!: string | null;
  @ApiProperty({ type: String, nullable: true }) reason!: string | null;
  @ApiProperty() shadow!: boolean;
  /** Null: until lifted. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expires_at!: string | null;
  /** When the ban was (last) set. */
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  /** The group admin who banned, or null for the backend (or moderation). */
  @ApiProperty({ type: BannedUserDto, nullable: true }) banned_by!: BannedUserDto | null;
}

@ApiSchema({ name: 'BanPage' })
export class BanListDto extends PageDto {
  @ApiProperty({ type: [BanViewDto] }) bans!: BanViewDto[];
}
