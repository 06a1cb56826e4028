import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { ChannelAccess } from './channel-access.service';
import { ChannelsController } from './channels.controller';
import { ChannelsRepository } from './channels.repository';
import { ChannelsService } from './channels.service';

@Module({
  imports: [UsersModule],
  controllers: [ChannelsController],
  providers: [ChannelsRepository, ChannelAccess, ChannelsService],
  exports: [ChannelsRepository, ChannelAccess, ChannelsService],
})
export class ChannelsModule {}
