import { Module } from '@nestjs/common';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { PreviewEnricher, PreviewRelay, PreviewWorkers } from './preview-enrichment';
import { PreviewsService } from './previews.service';

/**
 * Link previews without routes (every role): the fetch, the cache and its sweep (by the scheduler), and
 * the enrichment of messages (relay and jobs, unless SERVICE_ROLE=api).
 */
@Module({
  imports: [ChannelMembershipModule],
  providers: [PreviewsService, PreviewRelay, PreviewEnricher, PreviewWorkers],
  exports: [PreviewsService],
})
export class PreviewFetchModule {}
