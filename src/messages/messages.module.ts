import { Module } from '@nestjs/common';
import { BlocksModule } from '../blocks/blocks.module';
import { ChannelsModule } from '../channels/channels.module';
import { MutesModule } from '../mutes/mutes.module';
import { UsersModule } from '../users/users.module';
import { ActingUsers } from './acting-user.service';
import { ExtensionAttachments, MessageAttachments } from './message-attachments';
import { MessageHistoryService } from './message-history.service';
import { MessageModeration, NoModeration } from './message-moderation';
import { MessageViewsModule } from './message-views.module';
import { MessagesController } from './messages.controller';
import { MessagesRepository } from './messages.repository';
import { MessagesService } from './messages.service';

@Module({
  imports: [MessageViewsModule, ChannelsModule, UsersModule, MutesModule, BlocksModule],
  controllers: [MessagesController],
  providers: [
    MessagesRepository,
    MessagesService,
    MessageHistoryService,
    ActingUsers,
    // seams for later features: moderation and attachments bind their own implementations here
    { provide: MessageModeration, useClass: NoModeration },
    { provide: MessageAttachments, useClass: ExtensionAttachments },
  ],
  exports: [MessageViewsModule, MessagesRepository, MessagesService, ActingUsers],
})
export class MessagesModule {}
