import { Body, Controller, Delete, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { ApiErrors, NO_MESSAGE } from '../common/errors/api-errors';
import { MessageDto } from '../messages/dto/message.dto';
import { ActAsDto, AddReactionDto } from './dto/reaction.dto';
import { ReactionsService } from './reactions.service';

const REFUSED =
  'NOT_A_MEMBER, BANNED (the reacting user is banned, workspace-wide or in this channel), or CHANNEL_FROZEN (a user in a frozen channel)';

@ApiTags('reactions')
@Auth('any')
@Controller('v1/messages/:id/reactions')
export class ReactionsController {
  constructor(private readonly reactions: ReactionsService) {}

  /** 200 with the message. A different emoji replaces the user's previous reaction. */
  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'addReaction', summary: 'React to a message' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not a single emoji or :shortcode: of 1-64 characters; a backend key without user_external_id',
    403: REFUSED,
    404: NO_MESSAGE,
    422: 'MESSAGE_DELETED: the message was unsent',
  })
  add(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: AddReactionDto,
  ): Promise<MessageDto> {
    return this.reactions.add(p, id, dto.emoji, dto.user_external_id);
  }

  /** 200 with the message; a no-op when the user has no such reaction. A backend names the user in the query or body. */
  @Delete(':emoji')
  @HttpCode(200)
  @ApiOperation({ operationId: 'removeReaction', summary: 'Remove a reaction' })
  @ApiBody({ type: ActAsDto, required: false })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not an emoji or :shortcode:; a backend key without user_external_id, or with two different ones in the query and the body',
    403: REFUSED,
    404: NO_MESSAGE,
  })
  remove(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Param('emoji') emoji: string,
    @Query() query: ActAsDto,
    @Body() body: ActAsDto,
  ): Promise<MessageDto> {
    const fromQuery = query.user_external_id;
    const fromBody = body?.user_external_id;
    if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
      throw AppError.validation('user_external_id', 'differs between the query and the body');
    }
    return this.reactions.remove(p, id, emoji, fromQuery ?? fromBody);
  }
}
