import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors, BAD_EXTERNAL_ID, NO_USER } from '../common/errors/api-errors';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal, UserPrincipal } from '../common/auth/principal';
import { ExternalIdPipe } from '../users/external-id.pipe';
import { DeviceTokenPipe } from './device-token.pipe';
import { DevicesService } from './devices.service';
import { DeviceDto, DeviceListDto, RegisterDeviceDto } from './dto/device.dto';

const BAD_DEVICE =
  'VALIDATION_ERROR: a token that is not 1-4096 printable ASCII characters, a platform other than ios, android, web';
const BAD_TOKEN = 'VALIDATION_ERROR: a token that is not 1-4096 printable ASCII characters';

/** the caller's push devices. */
@ApiTags('devices')
@Auth('user')
@Controller('v1/me/devices')
export class MyDevicesController {
  constructor(private readonly devices: DevicesService) {}

  /** Registers a device for push; re-registering a token moves it to the caller. */
  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'registerMyDevice', summary: 'Register a push device' })
  @ApiCreatedResponse({ type: DeviceDto })
  @ApiErrors({ 400: BAD_DEVICE })
  register(@CurrentPrincipal() p: UserPrincipal, @Body() dto: RegisterDeviceDto): Promise<DeviceDto> {
    return this.devices.register(p.workspaceId, p.userId, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listMyDevices', summary: "List the caller's push devices" })
  @ApiOkResponse({ type: DeviceListDto })
  list(@CurrentPrincipal() p: UserPrincipal): Promise<DeviceListDto> {
    return this.devices.list(p.workspaceId, p.userId);
  }

  /** Unregistering a token that is not registered is fine. */
  @Delete(':token')
  @HttpCode(204)
  @ApiOperation({ operationId: 'unregisterMyDevice', summary: 'Unregister a push device' })
  @ApiNoContentResponse({ description: 'Unregistered' })
  @ApiErrors({ 400: BAD_TOKEN })
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
  @ApiOperation({ operationId: 'registerUserDevice', summary: "Register a user's push device" })
  @ApiCreatedResponse({ type: DeviceDto })
  @ApiErrors({ 400: `${BAD_DEVICE}; ${BAD_EXTERNAL_ID}`, 404: NO_USER })
  async register(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Body() dto: RegisterDeviceDto,
  ): Promise<DeviceDto> {
    return this.devices.register(p.workspaceId, await this.devices.userId(p.workspaceId, externalId), dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listUserDevices', summary: "List a user's push devices" })
  @ApiOkResponse({ type: DeviceListDto })
  @ApiErrors({ 400: BAD_EXTERNAL_ID, 404: NO_USER })
  async list(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
  ): Promise<DeviceListDto> {
    return this.devices.list(p.workspaceId, await this.devices.userId(p.workspaceId, externalId));
  }

  @Delete(':token')
  @HttpCode(204)
  @ApiOperation({ operationId: 'unregisterUserDevice', summary: "Unregister a user's push device" })
  @ApiNoContentResponse({ description: 'Unregistered' })
  @ApiErrors({ 400: `${BAD_TOKEN}; ${BAD_EXTERNAL_ID}`, 404: NO_USER })
  async unregister(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('external_id', ExternalIdPipe) externalId: string,
    @Param('token', DeviceTokenPipe) token: string,
  ): Promise<void> {
    await this.devices.unregister(p.workspaceId, await this.devices.userId(p.workspaceId, externalId), token);
  }
}
