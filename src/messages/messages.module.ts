import { Module } from '@nestjs/common';
import { BlocksModule } from '../blocks/blocks.module';
import { ChannelsModule } from '../channels/channels.module';
import { ModerationModule } from '../moderation/moderation.module';
import { MutesModule } from '../mutes/mutes.module';
import { UsersModule } from '../users/users.module';
import { ActingUsers } from './acting-user.service';
import { ExtensionAttachments, MessageAttachments } from './message-attachments';
import { MessageHistoryService } from './message-history.service';
import { MessageRules } from './message-rules';
import { MessageViewsModule } from './message-views.module';
import { MessagesController } from './messages.controller';
import { MessagesRepository } from './messages.repository';
import { MessagesService } from './messages.service';

@Module({
  imports: [MessageViewsModule, ChannelsModule, UsersModule, MutesModule, BlocksModule, ModerationModule],
  controllers: [MessagesController],
  providers: [
    MessagesRepository,
    MessagesService,
    MessageHistoryService,
    MessageRules,
    ActingUsers,
    // seams for later features: attachments binds its own implementation here; ModerationModule provides MessageModeration
    { provide: MessageAttachments, useClass: ExtensionAttachments },
  ],
  exports: [MessageViewsModule, MessagesRepository, MessagesService, ActingUsers],
})
export class MessagesModule {}
