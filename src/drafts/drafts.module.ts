import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessagesModule } from '../messages/messages.module';
import { DraftsController } from './drafts.controller';
import { DraftsService } from './drafts.service';

/** CONTRACT §24. The send deletes a draft in its own statement (chat_send_message); leaving cascades. */
@Module({
  imports: [ChannelsModule, MessagesModule],
  controllers: [DraftsController],
  providers: [DraftsService],
})
export class DraftsModule {}
