import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { ChannelAccess } from './channel-access.service';
import { ChannelsController } from './channels.controller';
import { ChannelsRepository } from './channels.repository';
import { ChannelsService } from './channels.service';
import { NobodyOnline, PresenceReader } from './presence-reader';

@Module({
  imports: [UsersModule],
  controllers: [ChannelsController],
  providers: [
    ChannelsRepository,
    ChannelAccess,
    ChannelsService,
    { provide: PresenceReader, useClass: NobodyOnline },
  ],
  exports: [ChannelsRepository, ChannelAccess, ChannelsService, PresenceReader],
})
export class ChannelsModule {}
