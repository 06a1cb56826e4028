import { Module } from '@nestjs/common';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { UsersModule } from '../users/users.module';
import { BansController } from './bans.controller';
import { BansRepository } from './bans.repository';
import { BansService } from './bans.service';

/** CONTRACT §19's bans; the write path reads them itself (ChannelWrites.read). */
@Module({
  imports: [UsersModule, ChannelMembershipModule],
  controllers: [BansController],
  providers: [BansRepository, BansService],
  exports: [BansRepository, BansService],
})
export class BansModule {}
