import { Module } from '@nestjs/common';
import { BlocksModule } from '../blocks/blocks.module';
import { ChannelsModule } from '../channels/channels.module';
import { MutesModule } from '../mutes/mutes.module';
import { UsersModule } from '../users/users.module';
import { MessageAttachments, PresignedAttachments } from './message-attachments';
import { AttachmentsModule } from '../attachments/attachments.module';
import { MessageHistoryService } from './message-history.service';
import { MessageRules } from './message-rules';
import { MessageViewsModule } from './message-views.module';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

@Module({
  imports: [MessageViewsModule, ChannelsModule, UsersModule, MutesModule, BlocksModule, AttachmentsModule],
  controllers: [MessagesController],
  providers: [
    MessagesService,
    MessageHistoryService,
    MessageRules,
    // seams: attachments binds its implementation here; MessageModeration is ModerationModule's (global, composed by AppModule)
    { provide: MessageAttachments, useClass: PresignedAttachments },
  ],
  exports: [MessageViewsModule, MessagesService, MessageRules],
})
export class MessagesModule {}
