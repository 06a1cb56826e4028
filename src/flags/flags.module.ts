import { Module } from '@nestjs/common';
import { BansModule } from '../bans/bans.module';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { MessagesModule } from '../messages/messages.module';
import { FlagQueueModule } from './flag-queue.module';
import { FlagReviewsController } from './flag-reviews.controller';
import { FlagReviewsService } from './flag-reviews.service';
import { FlagsController } from './flags.controller';
import { FlagsService } from './flags.service';

/** CONTRACT §19: flags (reports) and their review queue. */
@Module({
  imports: [FlagQueueModule, ChannelMembershipModule, MessagesModule, BansModule],
  controllers: [FlagsController, FlagReviewsController],
  providers: [FlagsService, FlagReviewsService],
})
export class FlagsModule {}
