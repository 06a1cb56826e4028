import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { SearchController } from './search.controller';
import { SearchRepository } from './search.repository';
import { SearchService } from './search.service';

/**
 * Full-text search over messages (CONTRACT §8, docs/SEARCH.md). The index lives in the database,
 * written off the send's path by the search indexer (SearchIndexModule, in the `all` and `worker` roles).
 */
@Module({
  imports: [ChannelsModule, MessageViewsModule],
  controllers: [SearchController],
  providers: [SearchRepository, SearchService],
})
export class SearchModule {}
