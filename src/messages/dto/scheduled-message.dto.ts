import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { MessageDto } from './message.dto';

/** Why a scheduled message's firing was refused: the error the send would have answered. */
@ApiSchema({ name: 'ScheduledMessageError' })
export class ScheduledMessageErrorDto {
  @ApiProperty({ example: 'CHANNEL_FROZEN' }) code!: string;
  @ApiProperty() message!: string;
}

/** CONTRACT §25: a send kept until `scheduled_at`, as its author sees it (nobody else does). */
@ApiSchema({ name: 'ScheduledMessage' })
export class ScheduledMessageDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) channel_id!: string;
  @ApiProperty() channel_external_id!: string;
  /** The thread's root for a thread reply; null otherwise. */
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) thread_id!: string | null;
  /** With thread_id: the reply is also shown in the channel. */
  @ApiProperty() show_in_channel!: boolean;
  /** The quoted message; null for none. */
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) parent_id!: string | null;
  @ApiProperty() content!: string;
  @ApiProperty({ type: String, nullable: true }) attachment_url!: string | null;
  /** External ids of the mentioned members, in the order given. */
  @ApiProperty({ type: [String] }) mentions!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) scheduled_at!: string;
  /** `failed`: its firing was refused (see `error`); a new `scheduled_at` re-arms it. */
  @ApiProperty({ enum: ['pending', 'failed'] }) status!: 'pending' | 'failed';
  @ApiProperty({ type: ScheduledMessageErrorDto, nullable: true }) error!: ScheduledMessageErrorDto | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

@ApiSchema({ name: 'ScheduledMessageAnswer' })
export class ScheduledMessageAnswerDto {
  /**
   * The scheduled message; null only in a replay (200) whose idempotency key names a message already
   * sent, which is then in `message`.
   */
  @ApiProperty({ type: ScheduledMessageDto, nullable: true }) scheduled_message!: ScheduledMessageDto | null;
  /** Only in a replay after the scheduled message was sent: the message it became. */
  @ApiPropertyOptional({ type: MessageDto }) message?: MessageDto;
}

/** PATCH /v1/scheduled/:id's answer. */
@ApiSchema({ name: 'ScheduledMessageChanged' })
export class ScheduledMessageChangedDto {
  @ApiProperty({ type: ScheduledMessageDto }) scheduled_message!: ScheduledMessageDto;
}
