import { Module } from '@nestjs/common';
import { SearchIndexer } from './search-indexer';

/**
 * The search indexer, a log follower: in every role (it starts in `all` and `worker`), apart from the
 * search API (SearchModule), which a worker does not serve.
 */
@Module({ providers: [SearchIndexer], exports: [SearchIndexer] })
export class SearchIndexModule {}
