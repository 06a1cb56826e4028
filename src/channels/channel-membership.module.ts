import { Module } from '@nestjs/common';
import { ChannelMembersRepository } from './channel-members.repository';
import { ChannelMembership } from './channel-membership';
import { ChannelWrites, SendBatcher } from './writes';
import { ChannelsRepository } from './channels.repository';

/**
 * The channel write session, the channel and member repositories and the membership side effects
 * (last-admin rule, system notices), without UsersModule: ErasureModule (which UsersModule imports)
 * uses it for user deletion, and ChannelsModule (which imports UsersModule) re-exports it, so there
 * is no cycle.
 */
@Module({
  providers: [ChannelsRepository, ChannelMembersRepository, ChannelWrites, SendBatcher, ChannelMembership],
  exports: [ChannelsRepository, ChannelMembersRepository, ChannelWrites, ChannelMembership],
})
export class ChannelMembershipModule {}
