import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE, NO_CHANNEL, NO_MESSAGE, NOT_A_MEMBER } from '../common/errors/api-errors';
import { ListQueryDto } from '../common/http/list-query.dto';
import { MessageDto, MessagePageDto } from '../messages/dto/message.dto';
import { PinsService } from './pins.service';

const WHO =
  'FORBIDDEN: a user who is not an admin of the group; NOT_A_MEMBER: a user outside the channel (a direct channel: either member may)';

/** pinned messages. */
@ApiTags('pins')
@Controller('v1')
export class PinsController {
  constructor(private readonly pins: PinsService) {}

  /** Pins the message: 200 with the message; pinning a pinned message changes nothing and fires no event. */
  @Post('messages/:id/pin')
  @HttpCode(200)
  @ApiOperation({ operationId: 'pinMessage', summary: 'Pin a message' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    403: WHO,
    404: NO_MESSAGE,
    409: 'PIN_LIMIT: the channel already has 50 pinned messages',
    422: 'MESSAGE_DELETED: the message was unsent',
  })
  @Auth('any')
  pin(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string): Promise<MessageDto> {
    return this.pins.pin(p, id);
  }

  /** Unpins the message: 200 with the message; unpinning a message that is not pinned changes nothing. */
  @Delete('messages/:id/pin')
  @HttpCode(200)
  @ApiOperation({ operationId: 'unpinMessage', summary: 'Unpin a message' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({ 403: WHO, 404: NO_MESSAGE })
  @Auth('any')
  unpin(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string): Promise<MessageDto> {
    return this.pins.unpin(p, id);
  }

  /** The channel's pinned messages, most recently pinned first; `before` takes the previous page's `next_cursor`. */
  @Get('channels/:id/pins')
  @ApiOperation({ operationId: 'listPinnedMessages', summary: "List a channel's pinned messages" })
  @ApiOkResponse({ type: MessagePageDto })
  @ApiErrors({ 400: BAD_PAGE, 403: NOT_A_MEMBER, 404: NO_CHANNEL })
  @Auth('any')
  list(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Query() q: ListQueryDto,
  ): Promise<MessagePageDto> {
    return this.pins.list(p, channelRef, q);
  }
}
