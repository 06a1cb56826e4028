import { ApiProperty } from '@nestjs/swagger';

/** OpenAPI schemas of the channel object (CONTRACT §6, §17) and its page: documentation only. */

export class ChannelMemberDto {
  external_id!: string;
  /** null in direct channels */
  @ApiProperty({ enum: ['admin', 'member'], nullable: true })
  role!: 'admin' | 'member' | null;
  joined_at!: string;
}

export class ChannelDto {
  id!: string;
  @ApiProperty({ enum: ['direct', 'group'] })
  type!: 'direct' | 'group';
  external_id!: string;
  name!: string | null;
  avatar_url!: string | null;
  member_count!: number;
  /** The creator's external_id */
  created_by!: string | null;
  created_at!: string;
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

export class ChannelListDto {
  channels!: ChannelDto[];
  has_more!: boolean;
  /** Pass as `before` for the next page; null on the last page */
  next_cursor!: string | null;
}
