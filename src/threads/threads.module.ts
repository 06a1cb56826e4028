import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { ThreadReadsService } from './thread-reads.service';
import { ThreadsController } from './threads.controller';

/** CONTRACT §23. The send writes participants and cursors itself (chat_send_message); these routes move cursors. */
@Module({
  imports: [ChannelsModule, MessageViewsModule],
  controllers: [ThreadsController],
  providers: [ThreadReadsService],
})
export class ThreadsModule {}
