import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import {
  BackendPrincipal,
  CurrentPrincipal,
  UserPrincipal,
  WorkspacePrincipal,
} from '../common/auth/principal';
import { ApiErrors, BAD_PAGE, NOT_A_MEMBER } from '../common/errors/api-errors';
import { uuidParam } from '../common/http/uuid-param';
import { ScheduledMessageChangedDto } from '../messages/dto/scheduled-message.dto';
import { ExternalIdPipe } from '../users/external-id.pipe';
import {
  ScheduledListQueryDto,
  ScheduledMessageListDto,
  ScheduledTargetQueryDto,
  UpdateScheduledMessageDto,
} from './dto/scheduled.dto';
import { ScheduledMessagesService } from './scheduled-messages.service';

const SCHEDULED_ID = uuidParam('Scheduled message');
const NO_SCHEDULED =
  "NOT_FOUND: no such scheduled message of the user (another user's, one already sent, or cancelled)";

/**
 * Scheduled messages (CONTRACT §25): a send with `scheduled_at` is kept until then, seen by its author
 * only. These routes list, change and cancel them; a backend key acts for a user it names.
 */
@ApiTags('scheduled-messages')
@Controller('v1')
export class ScheduledMessagesController {
  constructor(private readonly scheduled: ScheduledMessagesService) {}

  /** The caller's scheduled messages, pending and failed, soonest first. */
  @Get('me/scheduled')
  @Auth('user')
  @ApiOperation({ operationId: 'listMyScheduledMessages', summary: 'List my scheduled messages' })
  @ApiOkResponse({ type: ScheduledMessageListDto })
  @ApiErrors({ 400: BAD_PAGE })
  mine(
    @CurrentPrincipal() p: UserPrincipal,
    @Query() q: ScheduledListQueryDto,
  ): Promise<ScheduledMessageListDto> {
    return this.scheduled.list(p.userId, q);
  }

  /** A user's scheduled messages, pending and failed, soonest first (the backend key). */
  @Get('users/:external_id/scheduled')
  @Auth('backend')
  @ApiOperation({ operationId: 'listUserScheduledMessages', summary: "List a user's scheduled messages" })
  @ApiOkResponse({ type: ScheduledMessageListDto })
  @ApiErrors({ 400: BAD_PAGE, 404: 'NOT_FOUND: no such user in the workspace' })
  ofUser(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Query() q: ScheduledListQueryDto,
  ): Promise<ScheduledMessageListDto> {
    return this.scheduled.listOf(p.workspaceId, externalId, q);
  }

  /**
   * Changes a scheduled message before it is sent: what is given replaces what was scheduled, checked
   * as the send is. A new `scheduled_at` re-arms a failed one.
   */
  @Patch('scheduled/:id')
  @Auth('any')
  @ApiOperation({ operationId: 'updateScheduledMessage', summary: 'Change a scheduled message' })
  @ApiOkResponse({ type: ScheduledMessageChangedDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: scheduled_at not 1 second to 30 days ahead, empty content without an attachment, an unknown mention, metadata over 4 KiB; a backend key without user_external_id',
    403: NOT_A_MEMBER,
    404: NO_SCHEDULED,
    409: 'SCHEDULED_LIMIT: re-arming a failed one would make more than 100 pending',
    413: 'MESSAGE_TOO_LARGE: content over SERVICE_MAX_MESSAGE_SIZE_BYTES',
  })
  async update(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id', SCHEDULED_ID) id: string,
    @Body() dto: UpdateScheduledMessageDto,
  ): Promise<ScheduledMessageChangedDto> {
    return { scheduled_message: await this.scheduled.update(p, id, dto) };
  }

  /** Cancels a scheduled message: it is never sent. */
  @Delete('scheduled/:id')
  @Auth('any')
  @HttpCode(204)
  @ApiOperation({ operationId: 'cancelScheduledMessage', summary: 'Cancel a scheduled message' })
  @ApiNoContentResponse({ description: 'Cancelled' })
  @ApiErrors({ 400: 'VALIDATION_ERROR: a backend key without user_external_id', 404: NO_SCHEDULED })
  cancel(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id', SCHEDULED_ID) id: string,
    @Query() q: ScheduledTargetQueryDto,
  ): Promise<void> {
    return this.scheduled.cancel(p, id, q.user_external_id);
  }
}
