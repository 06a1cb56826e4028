import { Global, Module } from '@nestjs/common';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { MessageScheduling } from '../messages/message-scheduling';
import { MessageSendModule } from '../messages/message-send.module';
import { ScheduledMessagesController } from './scheduled-messages.controller';
import { ScheduledMessagesService } from './scheduled-messages.service';

/**
 * CONTRACT §25's scheduled message routes, and the send routes' `scheduled_at` (the MessageScheduling
 * seam, global, so MessagesModule needs no import of this feature); ScheduledFiringModule sends them.
 */
@Global()
@Module({
  imports: [ChannelMembershipModule, MessageSendModule],
  controllers: [ScheduledMessagesController],
  providers: [
    ScheduledMessagesService,
    { provide: MessageScheduling, useExisting: ScheduledMessagesService },
  ],
  exports: [MessageScheduling],
})
export class ScheduledMessagesModule {}
