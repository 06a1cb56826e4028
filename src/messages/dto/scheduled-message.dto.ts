import { ApiProperty, ApiSchema } from '@nestjs/swagger';

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
  @ApiProperty({ type: ScheduledMessageDto }) scheduled_message!: ScheduledMessageDto;
}
