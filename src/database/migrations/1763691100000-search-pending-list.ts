import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The search documents' GIN index takes new documents into its pending list (issue 24). With
 * `fastupdate = off` every document inserted a dozen entries into the index's tree, each a page change
 * with its WAL (and a full-page image after a checkpoint): most of what the search indexer cost per
 * message. The list takes one entry per document and is merged into the tree in bulk when it passes
 * 256 kB (about a thousand documents) or at a vacuum. The indexer fills it, off the send's path; edits
 * and unsends write their documents too, so now and then the merge (about 10 ms) falls to one of them,
 * under its channel's lock. A search scans the list as well as the tree, and 256 kB bounds that to a
 * few dozen pages.
 */
export class SearchPendingList1763691100000 implements MigrationInterface {
  name = 'SearchPendingList1763691100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER INDEX message_search_doc SET (fastupdate = on, gin_pending_list_limit = 256)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER INDEX message_search_doc SET (fastupdate = off)`);
    await q.query(`ALTER INDEX message_search_doc RESET (gin_pending_list_limit)`);
  }
}
