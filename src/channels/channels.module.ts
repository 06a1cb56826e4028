import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { ChannelAccess } from './channel-access.service';
import { ChannelsController } from './channels.controller';
import { ChannelMembershipModule } from './channel-membership.module';
import { ChannelsService } from './channels.service';

@Module({
  imports: [UsersModule, ChannelMembershipModule],
  controllers: [ChannelsController],
  providers: [ChannelAccess, ChannelsService],
  exports: [ChannelMembershipModule, ChannelAccess, ChannelsService],
})
export class ChannelsModule {}
