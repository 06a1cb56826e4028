import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { DeviceTokenPipe } from './device-token.pipe';
import { DevicesService } from './devices.service';
import { DeviceDto, DeviceListDto, RegisterDeviceDto } from './dto/device.dto';

/** CONTRACT §5: the caller's push devices. */
@ApiTags('devices')
@Auth('user')
@Controller('v1/me/devices')
export class MyDevicesController {
  constructor(private readonly devices: DevicesService) {}

  /** Registers a device for push; re-registering a token moves it to the caller. */
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ type: DeviceDto })
  register(@CurrentPrincipal() p: UserPrincipal, @Body() dto: RegisterDeviceDto): Promise<DeviceDto> {
    return this.devices.register(p.workspaceId, p.userId, dto);
  }

  @Get()
  @ApiOkResponse({ type: DeviceListDto })
  list(@CurrentPrincipal() p: UserPrincipal): Promise<DeviceListDto> {
    return this.devices.list(p.workspaceId, p.userId);
  }

  @Delete(':token')
  @HttpCode(204)
  async unregister(
    @CurrentPrincipal() p: UserPrincipal,
    @Param('token', DeviceTokenPipe) token: string,
  ): Promise<void> {
    await this.devices.unregister(p.workspaceId, p.userId, token);
  }
}

/** The backend's view of a user's devices. */
@ApiTags('devices')
@Auth('backend')
@Controller('v1/users/:external_id/devices')
export class UserDevicesController {
  constructor(private readonly devices: DevicesService) {}

  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ type: DeviceDto })
  async register(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: RegisterDeviceDto,
  ): Promise<DeviceDto> {
    return this.devices.register(p.workspaceId, await this.devices.userId(p.workspaceId, externalId), dto);
  }

  @Get()
  @ApiOkResponse({ type: DeviceListDto })
  async list(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<DeviceListDto> {
    return this.devices.list(p.workspaceId, await this.devices.userId(p.workspaceId, externalId));
  }

  @Delete(':token')
  @HttpCode(204)
  async unregister(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Param('token', DeviceTokenPipe) token: string,
  ): Promise<void> {
    await this.devices.unregister(p.workspaceId, await this.devices.userId(p.workspaceId, externalId), token);
  }
}
