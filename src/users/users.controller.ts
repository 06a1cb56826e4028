import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CredentialsService } from '../auth/credentials.service';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
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

  @Delete(':external_id')
  @HttpCode(204)
  async remove(@CurrentPrincipal() p: BackendPrincipal, @Param('external_id', ExternalIdPipe) externalId: string) {
    await this.users.delete(p.workspaceId, externalId);
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
