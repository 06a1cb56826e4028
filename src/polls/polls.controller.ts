import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { ApiErrors, NO_CHANNEL, NO_MESSAGE } from '../common/errors/api-errors';
import { MessageDto } from '../messages/dto/message.dto';
import { ActAsDto } from '../reactions/dto/reaction.dto';
import { CreatePollDto, PollVoteListDto, PollVotesQueryDto, VoteDto } from './dto/poll.dto';
import { PollsService } from './polls.service';

const REFUSED =
  'NOT_A_MEMBER, BANNED (the voting user is banned, workspace-wide or in this channel), or CHANNEL_FROZEN (a user in a frozen channel)';

/** CONTRACT §28: polls are messages of type `poll`; votes replace, counts are exact. */
@ApiTags('polls')
@Auth('any')
@Controller('v1')
export class PollsController {
  constructor(private readonly polls: PollsService) {}

  /** 201 with the poll message (a replay of its idempotency key: 200). Checked as a send, moderation of the question and options included. */
  @Post('channels/:id/polls')
  @ApiOperation({ operationId: 'createPoll', summary: 'Create a poll' })
  @ApiCreatedResponse({ type: MessageDto, description: 'The poll message' })
  @ApiOkResponse({ type: MessageDto, description: 'An idempotent replay: the original poll message' })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a question of 0 or over 300 characters, fewer than 2 or more than 10 options, an option of 0 or over 100 characters, options equal once trimmed (ignoring case), a closes_at less than 1 s or more than 1 year ahead, an unknown thread_id',
    403: 'NOT_A_MEMBER, MUTED, BANNED, or CHANNEL_FROZEN',
    404: NO_CHANNEL,
    422: 'MESSAGE_REJECTED: moderation refused the question or an option',
    429: "RATE_LIMITED, or SLOW_MODE (the channel's slow mode); Retry-After in seconds",
  })
  async create(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') channelRef: string,
    @Body() dto: CreatePollDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageDto> {
    const result = await this.polls.create(p, channelRef, dto);
    res.status(result.replayed ? 200 : 201);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    return result.message;
  }

  /** 200 with the poll message: the user's vote is replaced; the same options again change nothing. */
  @Put('messages/:id/poll/vote')
  @ApiOperation({ operationId: 'votePoll', summary: 'Vote in a poll' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not a poll, an option it does not have, the same option twice, not exactly one option in a single-choice poll; a backend key without user_external_id',
    403: REFUSED,
    404: NO_MESSAGE,
    409: 'POLL_CLOSED: the poll is closed',
    422: 'MESSAGE_DELETED: the poll was unsent',
  })
  vote(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Body() dto: VoteDto,
  ): Promise<MessageDto> {
    return this.polls.vote(p, id, dto.option_ids, dto.user_external_id);
  }

  /** 200 with the poll message; a no-op when the user has no vote. A backend names the user in the query or body. */
  @Delete('messages/:id/poll/vote')
  @HttpCode(200)
  @ApiOperation({ operationId: 'withdrawPollVote', summary: 'Withdraw a vote' })
  @ApiBody({ type: ActAsDto, required: false })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not a poll; a backend key without user_external_id, or with two different ones in the query and the body',
    403: REFUSED,
    404: NO_MESSAGE,
    409: 'POLL_CLOSED: the poll is closed',
    422: 'MESSAGE_DELETED: the poll was unsent',
  })
  withdraw(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Query() query: ActAsDto,
    @Body() body: ActAsDto,
  ): Promise<MessageDto> {
    const fromQuery = query.user_external_id;
    const fromBody = body?.user_external_id;
    if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody)
      throw AppError.validation('user_external_id', 'differs between the query and the body');
    return this.polls.withdraw(p, id, fromQuery ?? fromBody);
  }

  /** 200 with the poll message, closed; closing a closed poll changes nothing. */
  @Post('messages/:id/poll/close')
  @HttpCode(200)
  @ApiOperation({ operationId: 'closePoll', summary: 'Close a poll' })
  @ApiOkResponse({ type: MessageDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not a poll',
    403: 'FORBIDDEN: neither its creator, a group admin nor the backend key; NOT_A_MEMBER',
    404: NO_MESSAGE,
    422: 'MESSAGE_DELETED: the poll was unsent',
  })
  close(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string): Promise<MessageDto> {
    return this.polls.close(p, id);
  }

  /** Who voted for what, newest first (members and the backend); never for an anonymous poll. */
  @Get('messages/:id/poll/votes')
  @ApiOperation({ operationId: 'listPollVotes', summary: "List a poll's votes" })
  @ApiOkResponse({ type: PollVoteListDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not a poll, a bad cursor or limit',
    403: 'POLL_ANONYMOUS: the poll is anonymous (for everyone, the backend key included); NOT_A_MEMBER',
    404: NO_MESSAGE,
    422: 'MESSAGE_DELETED: the poll was unsent',
  })
  votes(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Param('id') id: string,
    @Query() q: PollVotesQueryDto,
  ): Promise<PollVoteListDto> {
    return this.polls.votes(p, id, q);
  }
}
