import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { UsersRepository } from '../users/users.repository';
import { DeviceRow, DevicesRepository } from './devices.repository';
import { DeviceDto, DeviceListDto, RegisterDeviceDto } from './dto/device.dto';

function view(r: DeviceRow): DeviceDto {
  return {
    token: r.token,
    platform: r.platform,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** CONTRACT §5 devices: registration works whether or not push is configured. */
@Injectable()
export class DevicesService {
  constructor(
    private readonly devices: DevicesRepository,
    private readonly users: UsersRepository,
  ) {}

  async register(workspaceId: string, userId: string, dto: RegisterDeviceDto): Promise<DeviceDto> {
    return view(await this.devices.upsert(workspaceId, userId, dto.token, dto.platform));
  }

  async list(workspaceId: string, userId: string): Promise<DeviceListDto> {
    return { devices: (await this.devices.list(workspaceId, userId)).map(view) };
  }

  /** Idempotent: unregistering a token the user does not hold is a no-op. */
  async unregister(workspaceId: string, userId: string, token: string): Promise<void> {
    await this.devices.delete(workspaceId, userId, token);
  }

  /** The backend routes name the user by external id (404 when not in the workspace). */
  async userId(workspaceId: string, externalId: string): Promise<string> {
    const user = await this.users.findByExternalId(workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    return user.id;
  }
}
