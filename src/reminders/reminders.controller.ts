import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE, NO_MESSAGE, NOT_A_MEMBER } from '../common/errors/api-errors';
import {
  CreateReminderDto,
  MyRemindersQueryDto,
  ReminderDto,
  ReminderListDto,
  ReminderTargetQueryDto,
  UpdateReminderDto,
} from './dto/reminder.dto';
import { RemindersService } from './reminders.service';

const BAD_TIME =
  'VALIDATION_ERROR: remind_at not an RFC 3339 time 1 second to 1 year ahead; a backend key without user_external_id';
const NO_REMINDER = 'NOT_FOUND: no such message in the workspace, or the user has no reminder about it';

/** Reminders (CONTRACT §25): a user's own, private to them; a backend key acts for a user it names. */
@ApiTags('reminders')
@Controller('v1')
export class RemindersController {
  constructor(private readonly reminders: RemindersService) {}

  /**
   * Sets a reminder about the message: with `remind_at` it fires then (`notification.reminder_due`, a
   * push, webhook `reminder.due`); without, it is saved for later and never fires.
   */
  @Post('messages/:id/reminder')
  @Auth('any')
  @ApiOperation({ operationId: 'createReminder', summary: 'Set a reminder about a message' })
  @ApiCreatedResponse({ type: ReminderDto })
  @ApiErrors({
    400: BAD_TIME,
    403: NOT_A_MEMBER,
    404: `${NO_MESSAGE} (or one the user does not see)`,
    409: 'REMINDER_EXISTS: the user has a reminder about this message; REMINDER_LIMIT: the user has 1,000 reminders',
    422: 'MESSAGE_DELETED: the message was unsent',
  })
  create(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: CreateReminderDto,
  ): Promise<ReminderDto> {
    return this.reminders.create(p, id, dto.remind_at, dto.user_external_id);
  }

  /** Re-times the reminder (a time arms it again, even a fired one) or, with null, makes it saved. */
  @Patch('messages/:id/reminder')
  @Auth('any')
  @ApiOperation({ operationId: 'updateReminder', summary: 'Change a reminder' })
  @ApiOkResponse({ type: ReminderDto })
  @ApiErrors({ 400: BAD_TIME, 403: NOT_A_MEMBER, 404: NO_REMINDER })
  update(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateReminderDto,
  ): Promise<ReminderDto> {
    return this.reminders.update(p, id, dto.remind_at, dto.user_external_id);
  }

  /** Deletes the reminder; it never fires. */
  @Delete('messages/:id/reminder')
  @HttpCode(204)
  @Auth('any')
  @ApiOperation({ operationId: 'deleteReminder', summary: 'Delete a reminder' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a backend key without user_external_id',
    403: NOT_A_MEMBER,
    404: NO_REMINDER,
  })
  delete(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Query() q: ReminderTargetQueryDto,
  ): Promise<void> {
    return this.reminders.delete(p, id, q.user_external_id);
  }

  /** The caller's reminders: `due` newest fired first, `upcoming` soonest first, else newest first. */
  @Get('me/reminders')
  @Auth('user')
  @ApiOperation({ operationId: 'listMyReminders', summary: "List the caller's reminders" })
  @ApiOkResponse({ type: ReminderListDto })
  @ApiErrors({ 400: `${BAD_PAGE}; an unknown filter` })
  list(@CurrentPrincipal() p: UserPrincipal, @Query() q: MyRemindersQueryDto): Promise<ReminderListDto> {
    return this.reminders.list(p, q);
  }
}
