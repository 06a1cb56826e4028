import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { IsMetadata } from '../../common/http/metadata';
import { IsOptionalNotNull } from '../../common/http/optional';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

export const MAX_SLOW_MODE_SECONDS = 3600;

/** A channel's controls and custom data, on create and on PATCH. */
class ChannelControlsDto {
  /** Users cannot send, edit, react or unsend (403 CHANNEL_FROZEN); backend and system sends pass. */
  @IsOptionalNotNull() @IsBoolean() frozen?: boolean;

  /** Seconds a member waits between their own sends (groups only; admins, backend and system are exempt). */
  @IsOptionalNotNull() @IsInt() @Min(0) @Max(MAX_SLOW_MODE_SECONDS) slow_mode_seconds?: number;

  /** Custom data: a JSON object of at most 4 KiB, returned with the channel everywhere. */
  @IsOptionalNotNull() @IsMetadata() metadata?: Record<string, unknown>;
}

export const MAX_MEMBERS_PER_REQUEST = 500;
const CHANNEL_EXTERNAL_ID = /^[^\s/\\?#%]{1,128}$/u;

export class CreateChannelDto extends ChannelControlsDto {
  @IsIn(['direct', 'group']) type!: 'direct' | 'group';

  /** Required for groups; generated for direct channels when omitted. */
  @ValidateIf((o: CreateChannelDto) => o.type === 'group' || o.external_id !== undefined)
  @IsString()
  @Matches(CHANNEL_EXTERNAL_ID, {
    message: 'external_id must be 1-128 characters without spaces, slashes, ?, # or %',
  })
  external_id?: string;

  @IsOptional() @IsString() @MaxLength(200) name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  avatar_url?: string;

  /** External id of the creator: added as a member and made admin (groups). */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `created_by ${EXTERNAL_ID_RULE}` })
  created_by?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MEMBERS_PER_REQUEST)
  @IsString({ each: true })
  @Matches(EXTERNAL_ID_PATTERN, { each: true, message: `each member ${EXTERNAL_ID_RULE}` })
  member_external_ids?: string[];
}

export class UpdateChannelDto extends ChannelControlsDto {
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  avatar_url?: string;
}

export class MembersDto {
  @IsArray()
  @ArrayMaxSize(MAX_MEMBERS_PER_REQUEST)
  @IsString({ each: true })
  @Matches(EXTERNAL_ID_PATTERN, { each: true, message: `each member ${EXTERNAL_ID_RULE}` })
  member_external_ids!: string[];
}

export class RoleDto {
  @IsIn(['admin', 'member']) role!: 'admin' | 'member';
}

/** At most this many `metadata.<key>=<value>` filters on the backend channel list. */
export const MAX_METADATA_FILTERS = 3;

export class ListChannelsQueryDto {
  /** Only channels this user (external id) belongs to. */
  @IsOptional() @IsString() @MaxLength(128) member?: string;
  @IsOptional() @IsIn(['direct', 'group']) type?: 'direct' | 'group';
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;
  @IsOptional() @IsString() @MaxLength(512) before?: string;
}
