import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { HistoryQueryDto } from './dto/history-query.dto';
import { MessageDto, MessagePageDto } from './dto/message.dto';
import { BackendSendMessageDto, EditMessageDto, SendMessageDto } from './dto/send-message.dto';
import { MessageHistoryService } from './message-history.service';
import { MessagesService, SendResult } from './messages.service';

/** The answers of both send forms (OpenAPI). */
function SendResponses() {
  return applyDecorators(
    ApiCreatedResponse({ type: MessageDto }),
    ApiOkResponse({ type: MessageDto, description: 'An idempotent replay: the original message' }),
    ApiBadRequestResponse({
      type: ErrorResponseDto,
      description:
        'VALIDATION_ERROR: e.g. a thread_id that is unknown, in another channel or itself a reply; metadata over 4 KiB',
    }),
    ApiForbiddenResponse({
      type: ErrorResponseDto,
      description:
        'NOT_A_MEMBER, MUTED, BANNED (workspace-wide or in this channel), or CHANNEL_FROZEN (a user in a frozen channel)',
    }),
    ApiTooManyRequestsResponse({
      type: ErrorResponseDto,
      description: "RATE_LIMITED, or SLOW_MODE (the channel's slow mode); Retry-After in seconds",
    }),
  );
}

@ApiTags('messages')
@Controller('v1')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly history: MessageHistoryService,
  ) {}

  /** Send as the JWT's user, or as `user_external_id` with a workspace key. 201; an idempotent replay 200. */
  @Post('channels/:id/messages')
  @Auth('any')
  @SendResponses()
  async send(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Body() dto: SendMessageDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answer(res, await this.messages.send(p, channelRef, dto));
  }

  /** The backend form: the channel in `channel_id`; `system: true` sends a system message. */
  @Post('messages')
  @Auth('backend')
  @SendResponses()
  async sendBackend(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: BackendSendMessageDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { channel_id, system, ...body } = dto;
    return answer(res, await this.messages.send(p, channel_id, body, system === true));
  }

  /** Newest first; `before` pages back, `after` (cursor or RFC 3339 time) catches up oldest first. */
  @Get('channels/:id/messages')
  @Auth('any')
  @ApiOkResponse({ type: MessagePageDto })
  list(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Query() q: HistoryQueryDto,
  ) {
    return this.history.page(p, channelRef, q);
  }

  /** A thread's replies, oldest first (CONTRACT §15). */
  @Get('messages/:id/replies')
  @Auth('any')
  @ApiOkResponse({ type: MessagePageDto })
  replies(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string, @Query() q: HistoryQueryDto) {
    return this.history.replies(p, id, q);
  }

  @Patch('messages/:id')
  @Auth('any')
  @ApiOkResponse({ type: MessageDto })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'NOT_A_MEMBER, NOT_AUTHOR, BANNED (the author is banned), or CHANNEL_FROZEN (a user in a frozen channel)',
  })
  edit(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string, @Body() dto: EditMessageDto) {
    return this.messages.edit(p, id, dto.content, dto.metadata);
  }

  /** Unsend: 200 with the blanked message, also when it was already unsent. */
  @Delete('messages/:id')
  @Auth('any')
  @HttpCode(200)
  @ApiOkResponse({ type: MessageDto })
  @ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: 'NOT_A_MEMBER, NOT_AUTHOR, or CHANNEL_FROZEN (a user in a frozen channel)',
  })
  unsend(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string) {
    return this.messages.unsend(p, id);
  }
}

function answer(res: Response, result: SendResult) {
  res.status(result.replayed ? 200 : 201);
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  return result.message;
}
