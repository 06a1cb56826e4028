import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, UserPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE, NO_CHANNEL, NO_MESSAGE, NOT_A_MEMBER } from '../common/errors/api-errors';
import { MarkDto } from '../receipts/dto/receipt.dto';
import { MyThreadListDto, MyThreadsQueryDto, ThreadReadResultDto, ThreadUnreadDto } from './dto/thread.dto';
import { ThreadReadsService } from './thread-reads.service';

const ROOT_ERRORS = {
  400: 'VALIDATION_ERROR: the message is itself a thread reply; a backend key without user_external_id',
  403: NOT_A_MEMBER,
  404: NO_MESSAGE,
} as const;

/** Thread read state (CONTRACT §23). */
@ApiTags('threads')
@Controller('v1')
export class ThreadsController {
  constructor(private readonly threads: ThreadReadsService) {}

  /** Marks the thread of this root read: the user's cursor moves to now (it does not make them a participant). */
  @Post('messages/:id/thread/read')
  @HttpCode(200)
  @Auth('any')
  @ApiOperation({ operationId: 'markThreadRead', summary: 'Mark a thread read' })
  @ApiBody({ type: MarkDto, required: false })
  @ApiOkResponse({ type: ThreadReadResultDto })
  @ApiErrors(ROOT_ERRORS)
  read(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: MarkDto,
  ): Promise<ThreadReadResultDto> {
    return this.threads.read(p, id, dto.user_external_id);
  }

  /**
   * Marks the thread unread from a reply on (without `message_id`: from the newest reply not the user's):
   * the user's cursor moves to just before it, and the user takes part in the thread.
   */
  @Post('messages/:id/thread/unread')
  @HttpCode(200)
  @Auth('any')
  @ApiOperation({ operationId: 'markThreadUnread', summary: 'Mark a thread unread from a reply on' })
  @ApiBody({ type: ThreadUnreadDto, required: false })
  @ApiOkResponse({ type: ThreadReadResultDto })
  @ApiErrors({
    ...ROOT_ERRORS,
    400: `${ROOT_ERRORS[400]}; message_id is not a reply of this thread`,
    404: `${NO_MESSAGE} (the root or message_id)`,
    422: 'MESSAGE_DELETED: the reply was unsent',
  })
  unread(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: ThreadUnreadDto,
  ): Promise<ThreadReadResultDto> {
    return this.threads.unread(p, id, dto.message_id, dto.user_external_id);
  }

  /** The threads the caller takes part in that have replies, latest reply first, with their unread replies. */
  @Get('me/threads')
  @Auth('user')
  @ApiOperation({ operationId: 'listMyThreads', summary: "List the caller's threads" })
  @ApiOkResponse({ type: MyThreadListDto })
  @ApiErrors({ 400: BAD_PAGE, 403: `${NOT_A_MEMBER} (the channel filter)`, 404: NO_CHANNEL })
  mine(@CurrentPrincipal() p: UserPrincipal, @Query() q: MyThreadsQueryDto): Promise<MyThreadListDto> {
    return this.threads.mine(p, q);
  }
}
