import { Module } from '@nestjs/common';
import { BlocksModule } from '../blocks/blocks.module';
import { ChannelsModule } from '../channels/channels.module';
import { MutesModule } from '../mutes/mutes.module';
import { UsersModule } from '../users/users.module';
import { MessageHistoryService } from './message-history.service';
import { MessageSendModule } from './message-send.module';
import { MessagesController } from './messages.controller';

@Module({
  imports: [MessageSendModule, ChannelsModule, UsersModule, MutesModule, BlocksModule],
  controllers: [MessagesController],
  providers: [MessageHistoryService],
  exports: [MessageSendModule],
})
export class MessagesModule {}
