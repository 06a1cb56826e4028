import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { ApiErrors, BAD_PAGE, NO_CHANNEL, NO_MESSAGE, NOT_A_MEMBER } from '../common/errors/api-errors';
import { HistoryQueryDto } from './dto/history-query.dto';
import { MessageDto, MessagePageDto } from './dto/message.dto';
import { ScheduledMessageAnswerDto } from './dto/scheduled-message.dto';
import { BackendSendMessageDto, EditMessageDto, SendMessageDto } from './dto/send-message.dto';
import { MessageHistoryService } from './message-history.service';
import { MessageScheduling, ScheduleResult } from './message-scheduling';
import { MessagesService, SendResult } from './messages.service';

/** The answers of both send forms (OpenAPI), in the contract's order of checks. */
function SendResponses() {
  return applyDecorators(
    ApiCreatedResponse({ type: MessageDto, description: 'The new message' }),
    ApiAcceptedResponse({
      type: ScheduledMessageAnswerDto,
      description:
        'With `scheduled_at`: the scheduled message, sent at that time (CONTRACT §25); nothing is visible to anyone else until then',
    }),
    ApiOkResponse({
      type: MessageDto,
      description:
        'An idempotent replay: the original message (with `scheduled_at`: `{scheduled_message}`, the original scheduled message, or once it was sent `{scheduled_message: null, message}`); no events fire',
      headers: {
        'Idempotent-Replayed': { description: 'Always `true`', schema: { type: 'string', enum: ['true'] } },
      },
    }),
    ApiErrors({
      400: 'VALIDATION_ERROR: a scheduled_at less than 1 s or more than 30 days ahead (or with system: true), empty content without an attachment, an attachment_url outside the public URL, an unknown parent, thread_id or mention, a thread_id in another channel or itself a reply, metadata over 4 KiB',
      403: 'NOT_A_MEMBER, MUTED, BANNED (workspace-wide or in this channel), or CHANNEL_FROZEN (a user in a frozen channel)',
      404: NO_CHANNEL,
      413: 'MESSAGE_TOO_LARGE: content over SERVICE_MAX_MESSAGE_SIZE_BYTES (UTF-8 bytes)',
      415: 'UNSUPPORTED_MEDIA_TYPE: an attachment of a type that is not allowed',
      422: 'MESSAGE_REJECTED: moderation refused the content',
      409: 'SCHEDULED_LIMIT: with scheduled_at, the user has 100 scheduled messages already',
      429: "RATE_LIMITED, or SLOW_MODE (the channel's slow mode); Retry-After in seconds",
    }),
  );
}

@ApiTags('messages')
@Controller('v1')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly history: MessageHistoryService,
    private readonly scheduling: MessageScheduling,
  ) {}

  /** Send as the JWT's user, or as `user_external_id` with a workspace key. 201; an idempotent replay 200. */
  @Post('channels/:id/messages')
  @Auth('any')
  @ApiOperation({ operationId: 'sendMessage', summary: 'Send a message' })
  @SendResponses()
  async send(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Body() dto: SendMessageDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageDto | ScheduledMessageAnswerDto> {
    if (dto.scheduled_at !== undefined)
      return scheduled(res, await this.scheduling.schedule(p, channelRef, dto));
    return answer(res, await this.messages.send(p, channelRef, dto));
  }

  /** The backend form: the channel in `channel_id`; `system: true` sends a system message. */
  @Post('messages')
  @Auth('backend')
  @ApiOperation({
    operationId: 'sendBackendMessage',
    summary: 'Send a message (backend form, system messages)',
  })
  @SendResponses()
  async sendBackend(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: BackendSendMessageDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageDto | ScheduledMessageAnswerDto> {
    const { channel_id, system, ...body } = dto;
    if (body.scheduled_at !== undefined) {
      if (system === true) throw AppError.validation('scheduled_at', 'a system message cannot be scheduled');
      return scheduled(res, await this.scheduling.schedule(p, channel_id, body));
    }
    return answer(res, await this.messages.send(p, channel_id, body, { system: system === true }));
  }

  /** Newest first; `before` pages back, `after` (cursor or RFC 3339 time) catches up oldest first. */
  @Get('channels/:id/messages')
  @Auth('any')
  @ApiOperation({ operationId: 'listMessages', summary: "List a channel's messages" })
  @ApiOkResponse({ type: MessagePageDto })
  @ApiErrors({
    400: `${BAD_PAGE}; an after that is neither a cursor nor a time`,
    403: NOT_A_MEMBER,
    404: NO_CHANNEL,
  })
  list(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Query() q: HistoryQueryDto,
  ): Promise<MessagePageDto> {
    return this.history.page(p, channelRef, q);
  }

  /** A thread's replies, oldest first. */
  @Get('messages/:id/replies')
  @Auth('any')
  @ApiOperation({ operationId: 'listReplies', summary: "List a thread's replies" })
  @ApiOkResponse({ type: MessagePageDto })
  @ApiErrors({ 400: BAD_PAGE, 403: NOT_A_MEMBER, 404: NO_MESSAGE })
  replies(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Query() q: HistoryQueryDto,
  ): Promise<MessagePageDto> {
    return this.history.replies(p, id, q);
  }

  /** New content (and metadata); it goes through the size checks and moderation again. */
  @Patch('messages/:id')
  @Auth('any')
  @ApiOperation({ operationId: 'editMessage', summary: 'Edit a message' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: content missing, whitespace only without an attachment, metadata over 4 KiB',
    403: 'NOT_A_MEMBER, NOT_AUTHOR, BANNED (the author is banned), or CHANNEL_FROZEN (a user in a frozen channel)',
    404: NO_MESSAGE,
    413: 'MESSAGE_TOO_LARGE: content over SERVICE_MAX_MESSAGE_SIZE_BYTES',
    422: 'MESSAGE_DELETED (unsent), EDIT_WINDOW_EXPIRED, or MESSAGE_REJECTED (moderation)',
  })
  edit(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: EditMessageDto,
  ): Promise<MessageDto> {
    return this.messages.edit(p, id, dto.content, dto.metadata);
  }

  /** Unsend: 200 with the blanked message, also when it was already unsent. */
  @Delete('messages/:id')
  @Auth('any')
  @HttpCode(200)
  @ApiOperation({ operationId: 'unsendMessage', summary: 'Unsend a message' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    403: 'NOT_A_MEMBER, NOT_AUTHOR, or CHANNEL_FROZEN (a user in a frozen channel)',
    404: NO_MESSAGE,
    422: 'UNSEND_WINDOW_EXPIRED',
  })
  unsend(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string): Promise<MessageDto> {
    return this.messages.unsend(p, id);
  }
}

function scheduled(res: Response, result: ScheduleResult): ScheduledMessageAnswerDto {
  res.status(result.replayed ? 200 : 202);
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  return result.message
    ? { scheduled_message: result.scheduled_message, message: result.message }
    : { scheduled_message: result.scheduled_message };
}

function answer(res: Response, result: SendResult): MessageDto {
  res.status(result.replayed ? 200 : 201);
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  return result.message;
}
