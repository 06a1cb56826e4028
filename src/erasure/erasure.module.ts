import { Module } from '@nestjs/common';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { ErasureProcessor } from './erasure.processor';
import { ErasureRepository } from './erasure.repository';
import { ErasureService } from './erasure.service';
import { ErasureSweeper } from './erasure-sweeper.service';
import { ErasureWorkers } from './erasure-workers.service';

/**
 * User erasure (CONTRACT §20) without routes: the service the users route calls, the `user.erase` job
 * and its sweeper. Imported by every role (the job runs in `all` and `worker`); UsersModule imports it
 * for `DELETE /v1/users/:external_id`, ErasuresModule for the job's state.
 */
@Module({
  imports: [ChannelMembershipModule, MessageViewsModule],
  providers: [ErasureRepository, ErasureProcessor, ErasureService, ErasureSweeper, ErasureWorkers],
  exports: [ErasureService, ErasureProcessor, ErasureSweeper],
})
export class ErasureModule {}
