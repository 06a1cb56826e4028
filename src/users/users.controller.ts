import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CredentialsService } from '../auth/credentials.service';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { ErasureAcceptedDto, EraseUserQueryDto } from '../erasure/dto/erasure.dto';
import { ErasureService } from '../erasure/erasure.service';
import { BatchUpsertUsersDto, IssueTokenDto, UpsertUserDto } from './dto/user.dto';
import { ExternalIdPipe } from './external-id.pipe';
import { UsersService } from './users.service';

@ApiTags('users')
@Auth('backend')
@Controller('v1/users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly credentials: CredentialsService,
    private readonly erasure: ErasureService,
  ) {}

  /** Creates (201, fires user.created) or updates (200) a user. */
  @Put(':external_id')
  async upsert(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: UpsertUserDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { user, created } = await this.users.upsert(p.workspaceId, { ...dto, external_id: externalId });
    res.status(created ? 201 : 200);
    return user;
  }

  /** Upserts 1-100 users in one transaction. */
  @Post()
  @HttpCode(200)
  async batch(@CurrentPrincipal() p: BackendPrincipal, @Body() dto: BatchUpsertUsersDto) {
    return { users: await this.users.upsertBatch(p.workspaceId, dto.users) };
  }

  @Get(':external_id')
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('external_id', ExternalIdPipe) externalId: string) {
    return this.users.get(p.workspaceId, externalId);
  }

  /**
   * Erases the user (CONTRACT §5, §20): their record, memberships (they leave their channels),
   * devices, blocks, reactions and mute go, and their messages are kept with `user: null`, anonymized
   * or deleted as `messages` says. 204 when done; with more than 1,000 messages the user is gone at
   * once (404, tokens refused, the external id free again) and a job finishes the rest: 202 `{job_id}`,
   * followed with `GET /v1/erasures/:id`.
   */
  @Delete(':external_id')
  @ApiNoContentResponse({ description: 'Erased, messages included' })
  @ApiAcceptedResponse({ type: ErasureAcceptedDto, description: 'The user is gone; a job erases their messages' })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'VALIDATION_ERROR: an unknown `messages` mode (nothing is changed)' })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto, description: 'UNAUTHORIZED: missing or invalid credentials' })
  @ApiForbiddenResponse({ type: ErrorResponseDto, description: 'FORBIDDEN: a user token (erasure takes the workspace key)' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'NOT_FOUND: no such user in the workspace' })
  async remove(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Query() q: EraseUserQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ErasureAcceptedDto | void> {
    const { jobId } = await this.erasure.erase(p.workspaceId, externalId, q.messages ?? 'keep');
    if (!jobId) {
      res.status(204);
      return;
    }
    res.status(202);
    return { job_id: jobId };
  }

  /** Issues a user JWT signed with the workspace secret (HS256, kid = api key). */
  @Post(':external_id/token')
  @HttpCode(200)
  async token(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: IssueTokenDto,
  ) {
    const user = await this.users.get(p.workspaceId, externalId);
    return this.credentials.issueUserToken(p.workspaceId, user, dto.ttl_seconds ?? 3600);
  }
}
