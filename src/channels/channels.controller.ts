import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { ChannelsService } from './channels.service';
import {
  CreateChannelDto,
  ListChannelsQueryDto,
  MembersDto,
  RoleDto,
  UpdateChannelDto,
} from './dto/channel.dto';

/** Backend routes: a workspace key, no role checks. */
@ApiTags('channels')
@Controller('v1/channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  /** Creates a channel (201); an existing direct channel for the same pair answers 200. */
  @Post()
  @Auth('backend')
  async create(
    @CurrentPrincipal() p: BackendPrincipal,
    @Body() dto: CreateChannelDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { channel, created } = await this.channels.create(p.workspaceId, dto);
    res.status(created ? 201 : 200);
    return channel;
  }

  @Get()
  @Auth('backend')
  list(@CurrentPrincipal() p: BackendPrincipal, @Query() q: ListChannelsQueryDto) {
    return this.channels.list(p.workspaceId, q);
  }

  @Get(':id')
  @Auth('backend')
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string) {
    return this.channels.get(p.workspaceId, id);
  }

  @Patch(':id')
  @Auth('backend')
  update(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string, @Body() dto: UpdateChannelDto) {
    return this.channels.update(p, id, dto);
  }

  /** Permanent: memberships, messages, reactions and receipts go with it. */
  @Delete(':id')
  @Auth('backend')
  @HttpCode(204)
  async remove(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string) {
    await this.channels.delete(p, id);
  }

  @Post(':id/members')
  @Auth('backend')
  @HttpCode(200)
  addMembers(@CurrentPrincipal() p: BackendPrincipal, @Param('id') id: string, @Body() dto: MembersDto) {
    return this.channels.addMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members')
  @Auth('backend')
  @HttpCode(204)
  async removeMembers(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Body() dto: MembersDto,
  ) {
    await this.channels.removeMembers(p, id, dto.member_external_ids);
  }

  @Delete(':id/members/:external_id')
  @Auth('backend')
  @HttpCode(204)
  async removeMember(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
  ) {
    await this.channels.removeMembers(p, id, [ext]);
  }

  @Patch(':id/members/:external_id')
  @Auth('backend')
  setRole(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id') id: string,
    @Param('external_id', ExternalIdPipe) ext: string,
    @Body() dto: RoleDto,
  ) {
    return this.channels.setRole(p, id, ext, dto.role);
  }

  /** Members with their role and presence. */
  @Get(':id/presence')
  @Auth('any')
  presence(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string) {
    return this.channels.presence(p, id);
  }
}
