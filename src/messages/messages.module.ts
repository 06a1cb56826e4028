import { Module } from '@nestjs/common';
import { BlocksModule } from '../blocks/blocks.module';
import { ChannelsModule } from '../channels/channels.module';
import { ModerationModule } from '../moderation/moderation.module';
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
  imports: [MessageViewsModule, ChannelsModule, UsersModule, MutesModule, BlocksModule, ModerationModule, AttachmentsModule],
  controllers: [MessagesController],
  providers: [
    MessagesService,
    MessageHistoryService,
    MessageRules,
    // seams for later features: attachments binds its own implementation here; ModerationModule provides MessageModeration
    { provide: MessageAttachments, useClass: PresignedAttachments },
  ],
  exports: [MessageViewsModule, MessagesService],
})
export class MessagesModule {}
