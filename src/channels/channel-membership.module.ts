import { Module } from '@nestjs/common';
import { MessageViewsModule } from '../messages/message-views.module';
import { ChannelMembership } from './channel-membership';
import { ChannelsRepository } from './channels.repository';

/**
 * The channel repository and the membership side effects (last-admin rule, system notices), without
 * UsersModule: UsersModule imports this for user deletion, and ChannelsModule (which imports
 * UsersModule) re-exports it, so there is no cycle.
 */
@Module({
  imports: [MessageViewsModule],
  providers: [ChannelsRepository, ChannelMembership],
  exports: [ChannelsRepository, ChannelMembership],
})
export class ChannelMembershipModule {}
