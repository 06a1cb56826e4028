import { Module } from '@nestjs/common';
import { MessageViewsModule } from '../messages/message-views.module';
import { ChannelsModule } from './channels.module';
import { ChannelStateRepository } from './channel-state.repository';
import { ChannelStateService } from './channel-state.service';
import { MyChannelsController } from './my-channels.controller';
import { MyChannelsService } from './my-channels.service';

/**
 * /v1/me/channels: channel management under SPEC's role rules, the inbox list (which needs message
 * views) and the caller's own channel state (CONTRACT §18).
 */
@Module({
  imports: [ChannelsModule, MessageViewsModule],
  controllers: [MyChannelsController],
  providers: [MyChannelsService, ChannelStateService, ChannelStateRepository],
  exports: [MyChannelsService],
})
export class MyChannelsModule {}
