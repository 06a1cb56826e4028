import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, ValidateIf } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import { IsRfc3339 } from '../../common/http/rfc3339';
import { MessageDto } from '../../messages/dto/message.dto';
import { MarkDto } from '../../receipts/dto/receipt.dto';

export const REMINDER_STATUSES = ['saved', 'upcoming', 'due'] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

/** POST /v1/messages/:id/reminder. */
export class CreateReminderDto extends MarkDto {
  /** When to be reminded, 1 s to 1 year ahead; omitted or null: saved for later (never fires). */
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, example: '2026-12-01T09:00:00Z' })
  @ValidateIf((_o: object, v: unknown) => v !== undefined && v !== null)
  @IsRfc3339('remind_at')
  remind_at?: string | null;
}

/** PATCH /v1/messages/:id/reminder. */
export class UpdateReminderDto extends MarkDto {
  /** A time (1 s to 1 year ahead) arms the reminder, re-arming a fired one; null makes it saved. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2026-12-01T09:00:00Z' })
  @ValidateIf((_o: object, v: unknown) => v !== null)
  @IsRfc3339('remind_at')
  remind_at!: string | null;
}

/** DELETE /v1/messages/:id/reminder. */
export class ReminderTargetQueryDto extends MarkDto {}

export class MyRemindersQueryDto extends ListQueryDto {
  /** `due`: newest fired first; `upcoming`: soonest first; `saved` and none: newest created first. */
  @ApiPropertyOptional({ enum: REMINDER_STATUSES })
  @IsOptional()
  @IsIn(REMINDER_STATUSES, { message: `filter must be one of ${REMINDER_STATUSES.join(', ')}` })
  filter?: ReminderStatus;
}

@ApiSchema({ name: 'Reminder' })
export class ReminderDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) message_id!: string;
  @ApiProperty({ format: 'uuid' }) channel_id!: string;
  @ApiProperty() channel_external_id!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) remind_at!: string | null;
  @ApiProperty({ enum: REMINDER_STATUSES }) status!: ReminderStatus;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) fired_at!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
  /** The message as history shows it to the user. */
  @ApiProperty({ type: MessageDto }) message!: MessageDto;
}

@ApiSchema({ name: 'ReminderList' })
export class ReminderListDto {
  @ApiProperty({ type: [ReminderDto] }) reminders!: ReminderDto[];
  @ApiProperty() has_more!: boolean;
  @ApiProperty({ type: String, nullable: true }) next_cursor!: string | null;
}
