import { Body, Controller, Delete, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiForbiddenResponse, ApiNotFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { MessageDto } from '../messages/dto/message.dto';
import { ActAsDto, AddReactionDto } from './dto/reaction.dto';
import { ReactionsService } from './reactions.service';

const REFUSED =
  'NOT_A_MEMBER, BANNED (the reacting user is banned, workspace-wide or in this channel), or CHANNEL_FROZEN (a user in a frozen channel)';

@ApiTags('reactions')
@Auth('any')
@ApiOkResponse({ type: MessageDto })
@ApiForbiddenResponse({ type: ErrorResponseDto, description: REFUSED })
@ApiNotFoundResponse({ type: ErrorResponseDto, description: 'NOT_FOUND: no such message in the workspace' })
@Controller('v1/messages/:id/reactions')
export class ReactionsController {
  constructor(private readonly reactions: ReactionsService) {}

  /** 200 with the message. A different emoji replaces the user's previous reaction. */
  @Post()
  @HttpCode(200)
  add(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string, @Body() dto: AddReactionDto) {
    return this.reactions.add(p, id, dto.emoji, dto.user_external_id);
  }

  /** 200 with the message; a no-op when the user has no such reaction. A backend names the user in the query or body. */
  @Delete(':emoji')
  @HttpCode(200)
  remove(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Param('emoji') emoji: string,
    @Query() query: ActAsDto,
    @Body() body: ActAsDto,
  ) {
    const fromQuery = query.user_external_id;
    const fromBody = body?.user_external_id;
    if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
      throw AppError.validation('user_external_id', 'differs between the query and the body');
    }
    return this.reactions.remove(p, id, emoji, fromQuery ?? fromBody);
  }
}
