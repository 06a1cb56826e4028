import { Module } from '@nestjs/common';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { MessageSendModule } from '../messages/message-send.module';
import { PollClosing } from './poll-closing';
import { PollsService } from './polls.service';

/** Polls without routes: their service and their closing at `closes_at` (every role; the scheduler runs it unless SERVICE_ROLE=api). */
@Module({
  imports: [MessageSendModule, ChannelMembershipModule],
  providers: [PollsService, PollClosing],
  exports: [PollsService],
})
export class PollEngineModule {}
