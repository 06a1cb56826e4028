import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CredentialsService } from '../auth/credentials.service';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_EXTERNAL_ID, NO_USER } from '../common/errors/api-errors';
import { ErasureAcceptedDto, EraseUserQueryDto } from '../erasure/dto/erasure.dto';
import { ErasureService } from '../erasure/erasure.service';
import {
  BatchUpsertUsersDto,
  IssueTokenDto,
  UpsertUserDto,
  UserDto,
  UserListDto,
  UserTokenDto,
} from './dto/user.dto';
import { ExternalIdPipe } from './external-id.pipe';
import { UsersService } from './users.service';

const USER_BODY = `${BAD_EXTERNAL_ID}; a bad name, avatar_url or metadata (over 4 KiB)`;

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
  @ApiOperation({ operationId: 'upsertUser', summary: 'Create or update a user' })
  @ApiCreatedResponse({ type: UserDto, description: 'The user was created' })
  @ApiOkResponse({ type: UserDto, description: 'The user existed and was updated' })
  @ApiErrors({ 400: USER_BODY })
  async upsert(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: UpsertUserDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserDto> {
    const { user, created } = await this.users.upsert(p.workspaceId, { ...dto, external_id: externalId });
    res.status(created ? 201 : 200);
    return user;
  }

  /** Upserts 1-100 users in one transaction. */
  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'upsertUsers', summary: 'Create or update up to 100 users' })
  @ApiOkResponse({ type: UserListDto })
  @ApiErrors({ 400: 'VALIDATION_ERROR: not 1-100 users, or a bad external_id, name, avatar_url or metadata' })
  async batch(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: BatchUpsertUsersDto,
  ): Promise<UserListDto> {
    return { users: await this.users.upsertBatch(p.workspaceId, dto.users) };
  }

  @Get(':external_id')
  @ApiOperation({ operationId: 'getUser', summary: 'Get a user' })
  @ApiOkResponse({ type: UserDto })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: NO_USER })
  get(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<UserDto> {
    return this.users.get(p.workspaceId, externalId);
  }

  /**
   * Erases the user: their record, memberships (they leave their channels),
   * devices, blocks, reactions and mute go, and their messages are kept with `user: null`, anonymized
   * or deleted as `messages` says. 204 when done; with more than 1,000 messages the user is gone at
   * once (404, tokens refused, the external id free again) and a job finishes the rest: 202 `{job_id}`,
   * followed with `GET /v1/erasures/:id`.
   */
  @Delete(':external_id')
  @ApiOperation({ operationId: 'deleteUser', summary: 'Delete (erase) a user' })
  @ApiNoContentResponse({ description: 'Erased, messages included' })
  @ApiAcceptedResponse({
    type: ErasureAcceptedDto,
    description: 'The user is gone; a job erases their messages',
  })
  @ApiErrors({ 400: `${BAD_EXTERNAL_ID}; an unknown \`messages\` mode (nothing is changed)`, 404: NO_USER })
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
  @ApiOperation({ operationId: 'issueUserToken', summary: 'Issue a user JWT' })
  @ApiBody({ type: IssueTokenDto, required: false })
  @ApiOkResponse({ type: UserTokenDto })
  @ApiErrors({ 400: `${BAD_EXTERNAL_ID}; ttl_seconds outside 60-86400`, 404: NO_USER })
  async token(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: IssueTokenDto,
  ): Promise<UserTokenDto> {
    const user = await this.users.get(p.workspaceId, externalId);
    return this.credentials.issueUserToken(p.workspaceId, user, dto.ttl_seconds ?? 3600);
  }
}
