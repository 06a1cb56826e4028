import { Module } from '@nestjs/common';
import { MessageViewsModule } from '../messages/message-views.module';
import { ChannelsModule } from './channels.module';
import { MyChannelsController } from './my-channels.controller';
import { MyChannelsService } from './my-channels.service';

/** /v1/me/channels: channel management under SPEC's role rules, and the inbox list (which needs message views). */
@Module({
  imports: [ChannelsModule, MessageViewsModule],
  controllers: [MyChannelsController],
  providers: [MyChannelsService],
})
export class MyChannelsModule {}
