import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { MyDevicesController, UserDevicesController } from './devices.controller';
import { DevicesRepository } from './devices.repository';
import { DevicesService } from './devices.service';

/** Push device registration (CONTRACT §5), for users and for the backend. */
@Module({
  imports: [UsersModule],
  controllers: [MyDevicesController, UserDevicesController],
  providers: [DevicesRepository, DevicesService],
})
export class DevicesModule {}
