import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { PageDto } from '../../common/http/page.dto';

/** The channel object, its page, and what the channel routes answer besides it. */

@ApiSchema({ name: 'ChannelMember' })
export class ChannelMemberDto {
  external_id!: string;
  /** null in direct channels */
  @ApiProperty({ enum: ['admin', 'member'], nullable: true })
  role!: 'admin' | 'member' | null;
  @ApiProperty({ format: 'date-time' })
  joined_at!: string;
}

@ApiSchema({ name: 'Channel' })
export class ChannelDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ enum: ['direct', 'group'] })
  type!: 'direct' | 'group';
  external_id!: string;
  name!: string | null;
  avatar_url!: string | null;
  member_count!: number;
  /**
   * More members than the workspace's `large_channel_threshold`: presence does not flow through it,
   * `channel.read` is not broadcast, typing is throttled and member events go to its admins only
   */
  large!: boolean;
  /** The creator's external_id */
  created_by!: string | null;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
  /** Users cannot send, edit, react or unsend (403 CHANNEL_FROZEN); backend and system sends pass */
  frozen!: boolean;
  /** Seconds a member waits between their own sends (0: off; groups only) */
  slow_mode_seconds!: number;
  /** Custom data: a JSON object of at most 4 KiB */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { team: 'red' } })
  metadata!: Record<string, unknown>;
  members!: ChannelMemberDto[];
}

@ApiSchema({ name: 'ChannelPage' })
export class ChannelListDto extends PageDto {
  channels!: ChannelDto[];
}

@ApiSchema({ name: 'PresenceMember' })
export class PresenceMemberDto {
  external_id!: string;
  /** null in direct channels */
  @ApiProperty({ enum: ['admin', 'member'], nullable: true })
  role!: 'admin' | 'member' | null;
  /** At least one connected socket on any instance */
  online!: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_seen_at!: string | null;
}

/** GET /v1/channels/:id/presence: a page of the members, online ones first, each group by external_id. */
@ApiSchema({ name: 'ChannelPresence' })
export class ChannelPresenceDto extends PageDto {
  members!: PresenceMemberDto[];
  /** Members online now, over the whole channel */
  online_count!: number;
}

/** Query of GET /v1/channels/:id/presence. */
export class ChannelPresenceQueryDto {
  /** Page size, 1-200 (default 100). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  /** The `next_cursor` of the previous page. */
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}
