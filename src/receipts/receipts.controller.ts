import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, NO_CHANNEL } from '../common/errors/api-errors';
import {
  ChannelReceiptsDto,
  MarkDto,
  MarkUnreadDto,
  MarkUnreadResultDto,
  ReadCursorsDto,
} from './dto/receipt.dto';
import { ReceiptsService } from './receipts.service';

const MARK_ERRORS = {
  400: 'VALIDATION_ERROR: a backend key without user_external_id, or a malformed one',
  403: 'NOT_A_MEMBER: the user is not in the channel',
  404: NO_CHANNEL,
} as const;

@ApiTags('receipts')
@Auth('any')
@Controller('v1/channels/:id')
export class ReceiptsController {
  constructor(private readonly receipts: ReceiptsService) {}

  /** Sets the caller's last_read_at to now (and last_delivered_at to at least that). */
  @Post('read')
  @HttpCode(200)
  @ApiOperation({ operationId: 'markChannelRead', summary: 'Mark a channel read' })
  @ApiBody({ type: MarkDto, required: false })
  @ApiOkResponse({ type: ReadCursorsDto })
  @ApiErrors(MARK_ERRORS)
  read(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: MarkDto,
  ): Promise<ReadCursorsDto> {
    return this.receipts.markRead(p, id, dto.user_external_id);
  }

  /**
   * Marks the channel unread from a message on: the caller's read position moves to just before it, so
   * it and every later message count as unread again (their own messages never do). Receipts others see
   * do not move back. A thread-only reply is marked in its thread instead.
   */
  @Post('unread')
  @HttpCode(200)
  @ApiOperation({ operationId: 'markChannelUnread', summary: 'Mark a channel unread from a message on' })
  @ApiBody({ type: MarkUnreadDto })
  @ApiOkResponse({ type: MarkUnreadResultDto })
  @ApiErrors({
    ...MARK_ERRORS,
    400: `${MARK_ERRORS[400]}; no message_id; a reply shown only in its thread`,
    404: `${NO_CHANNEL}; NOT_FOUND: the message is not in the channel's history as the caller sees it`,
    422: 'MESSAGE_DELETED: the message was unsent',
  })
  unread(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: MarkUnreadDto,
  ): Promise<MarkUnreadResultDto> {
    return this.receipts.markUnread(p, id, dto.message_id, dto.user_external_id);
  }

  /** Sets the caller's last_delivered_at to now. Cursors never move backwards. */
  @Post('delivered')
  @HttpCode(200)
  @ApiOperation({ operationId: 'markChannelDelivered', summary: 'Mark a channel delivered' })
  @ApiBody({ type: MarkDto, required: false })
  @ApiOkResponse({ type: ReadCursorsDto })
  @ApiErrors(MARK_ERRORS)
  delivered(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: MarkDto,
  ): Promise<ReadCursorsDto> {
    return this.receipts.markDelivered(p, id, dto.user_external_id);
  }

  /** Every member's read and delivery cursors. */
  @Get('receipts')
  @ApiOperation({
    operationId: 'listChannelReceipts',
    summary: "List the members' read and delivery cursors",
  })
  @ApiOkResponse({ type: ChannelReceiptsDto })
  @ApiErrors({ 403: 'NOT_A_MEMBER: a user outside the channel', 404: NO_CHANNEL })
  list(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string): Promise<ChannelReceiptsDto> {
    return this.receipts.list(p, id);
  }
}
