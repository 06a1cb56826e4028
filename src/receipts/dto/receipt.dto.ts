import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

export class MarkDto {
  /** Backend keys name the user they act for. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}

/** The caller's cursors after marking a channel read or delivered. */
@ApiSchema({ name: 'ReadCursors' })
export class ReadCursorsDto {
  @ApiProperty({ format: 'date-time' })
  last_read_at!: string;
  @ApiProperty({ format: 'date-time' })
  last_delivered_at!: string;
}

@ApiSchema({ name: 'MemberReceipt' })
export class MemberReceiptDto extends ReadCursorsDto {
  external_id!: string;
}

/** GET /v1/channels/:id/receipts: every member's cursors. */
@ApiSchema({ name: 'ChannelReceipts' })
export class ChannelReceiptsDto {
  members!: MemberReceiptDto[];
}
