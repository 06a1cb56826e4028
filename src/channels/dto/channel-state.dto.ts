import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Matches, MaxLength, ValidateBy, ValidateIf } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { IsOptionalNotNull } from '../../common/http/optional';
import { parseRfc3339 } from '../../common/rfc3339';
import { FOREVER } from '../channel-state.sql';
import { PageDto } from '../../common/http/page.dto';
import { MessageDto } from '../../messages/dto/message.dto';
import { ChannelDto } from './channel-response.dto';

const MUTED_UNTIL_RULE = `must be an RFC 3339 time, "${FOREVER}" or null`;

/** An RFC 3339 time (a real instant, years 1-9999) or "forever". */
function IsTimeOrForever(): PropertyDecorator {
  return ValidateBy({
    name: 'isTimeOrForever',
    validator: {
      validate: (v: unknown) =>
        v === FOREVER || (typeof v === 'string' && v.length <= 40 && parseRfc3339(v) !== null),
      defaultMessage: () => `muted_until ${MUTED_UNTIL_RULE}`,
    },
  });
}

/**
 * PATCH /v1/me/channels/:id/state: the caller's own state of a channel. Only the fields
 * present change; an empty body changes nothing and answers the current state.
 */
export class ChannelStateDto {
  /**
   * No push for this channel's messages until then (mentions of the caller still push): an RFC 3339
   * time (kept to the millisecond), "forever", or null to unmute. A time in the past unmutes too.
   */
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: `An RFC 3339 time, "${FOREVER}", or null to unmute.`,
    example: '2026-11-21T10:00:00.000Z',
  })
  @ValidateIf((_o: object, v: unknown) => v !== undefined && v !== null)
  @IsTimeOrForever()
  muted_until?: string | null;

  /** true: out of GET /v1/me/channels until the next message from anyone else (own messages keep it hidden). */
  @IsOptionalNotNull() @IsBoolean() hidden?: boolean;

  /** true: out of GET /v1/me/channels, new messages or not, until set false. */
  @IsOptionalNotNull() @IsBoolean() archived?: boolean;
}

export class MyChannelsQueryDto extends ListQueryDto {
  /** Also list hidden and/or archived channels: `hidden`, `archived` or `hidden,archived`. */
  @ApiPropertyOptional({ example: 'hidden,archived' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  @Matches(/^((hidden|archived)(,(hidden|archived))*)?$/, {
    message: 'include must be a comma-separated list of hidden, archived',
  })
  include?: string;
}

/** A channel as GET /v1/me/channels lists it to the caller: the channel object and the caller's view. */
@ApiSchema({ name: 'MyChannel' })
export class MyChannelDto extends ChannelDto {
  /** The caller's role (null in direct channels) */
  @ApiProperty({ enum: ['admin', 'member'], nullable: true })
  role!: 'admin' | 'member' | null;
  unread_count!: number;
  mention_unread_count!: number;
  /** The channel's threads with unread replies for the caller (CONTRACT §23). */
  unread_threads!: number;
  @ApiProperty({ format: 'date-time' })
  last_read_at!: string;
  /** The last message the caller may see, as history renders it, or null */
  @ApiProperty({ type: MessageDto, nullable: true })
  last_message!: MessageDto | null;
  /** "forever", the time the caller's mute ends while it is in the future, else null */
  @ApiProperty({ type: String, nullable: true, example: FOREVER })
  muted_until!: string | null;
  /** Hidden by the caller and no message from anyone else since */
  hidden!: boolean;
  /** Archived by the caller */
  archived!: boolean;
}

@ApiSchema({ name: 'MyChannelPage' })
export class MyChannelListDto extends PageDto {
  channels!: MyChannelDto[];
}
