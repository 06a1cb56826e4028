import { Inject, Injectable, Logger } from '@nestjs/common';
import { Readable } from 'stream';
import { DataSource } from 'typeorm';
import { prepared } from '../infra/database/prepared';
import { ObjectStorage } from '../infra/storage/object-storage';
import { ExportContext, ExportReader, ExportSection, renderExport } from './export-document';
import { ExportClaim, ExportsRepository } from './exports.repository';
import { JobProcessor, ProcessesJob } from '../infra/queue/job-processor';

export const EXPORT_JOB = 'export.build' as const;
/** The sections a build writes (a provider, so the list is the one in `sections/index.ts`). */
export const EXPORT_SECTIONS_TOKEN = Symbol('EXPORT_SECTIONS');

/** Builds of one export before it is marked failed (within the queue's own JOB_ATTEMPTS). */
export const EXPORT_ATTEMPTS = 3;
/** A build's lease; renewed between pages once a third of it has passed. */
export const EXPORT_LEASE_MS = 60_000;

export const EXPORT_CONTENT_TYPE = 'application/json';

/** Where an export's document is stored: outside the attachments' `<workspace>/<uuid>/<name>` keys. */
export function exportObjectKey(workspaceId: string, exportId: string): string {
  return `exports/${workspaceId}/${exportId}.json`;
}

/** The process is shutting down: the build stops and gives its attempt back. */
class BuildStopped extends Error {}
/** Another build holds the export now (this one outlived its lease): this one leaves it alone. */
class LeaseLost extends Error {}

/**
 * One `export.build` job: claims the pending export (a lease in its row, so two workers never build
 * one export at once), streams the document (each section in keyset pages) into the storage driver
 * and marks it ready. Retry-safe: a job for an export that is ready, failed or held by a live lease
 * does nothing; a retry after a crash claims again once the lease ran out and rebuilds from scratch
 * under the same key. A build that throws is retried by the queue; its third failure marks the
 * export `failed`. On shutdown a build in progress stops at its next page and gives its attempt back.
 */
@Injectable()
// each build streams a whole document: few at a time
@ProcessesJob(EXPORT_JOB, { concurrency: 2 })
export class ExportBuildProcessor extends JobProcessor<typeof EXPORT_JOB> {
  private readonly logger = new Logger('ExportBuild');
  private stopping = false;

  constructor(
    private readonly db: DataSource,
    private readonly exports: ExportsRepository,
    private readonly storage: ObjectStorage,
    @Inject(EXPORT_SECTIONS_TOKEN) private readonly sections: readonly ExportSection[],
  ) {
    super();
  }

  /**
   * Sections read straight through pg's pool as named prepared statements (`prepared`), not through
   * a TypeORM QueryRunner per statement: with a QueryRunner per page, the results survived young
   * collections and the old space grew by ~110 MB between full ones (worker peak RSS 289 MB on a
   * 300k-message export, bench/export.ts); through the pool, 156 MB.
   */
  private readonly reader: ExportReader = {
    query: <T>(sql: string, params: unknown[]) => prepared<T>(this.db.manager, sql, params),
  };

  /** Makes builds in progress stop at their next page (and new jobs do nothing). */
  stop(): void {
    this.stopping = true;
  }

  async handle(job: { exportId: string }): Promise<void> {
    if (this.stopping) return; // still pending: the sweeper re-enqueues it after the restart
    const claim = await this.exports.claim(job.exportId, EXPORT_LEASE_MS);
    if (!claim) return;
    if (!claim.user_id) {
      await this.exports.markFailed(claim.id, 'the user was deleted', claim);
      return;
    }
    const key = exportObjectKey(claim.workspace_id, claim.id);
    const started = Date.now();
    try {
      const size = await this.storage.putStream(
        key,
        this.document(claim, claim.user_id),
        EXPORT_CONTENT_TYPE,
      );
      const outcome = await this.exports.markReady(claim, key, size);
      if (outcome === 'gone') await this.storage.delete(key);
      this.logger.log(`export ${claim.id}: ${outcome}, ${size} bytes in ${Date.now() - started} ms`);
    } catch (err) {
      if (err instanceof LeaseLost) {
        this.logger.warn(`export ${claim.id}: attempt ${claim.attempts} lost its lease to another build`);
        return;
      }
      if (err instanceof BuildStopped) {
        await this.exports.release(claim, true).catch(() => undefined);
        throw err;
      }
      if (claim.attempts < EXPORT_ATTEMPTS) {
        this.logger.warn(`export ${claim.id}: attempt ${claim.attempts} failed: ${String(err)}`);
        await this.exports.release(claim).catch(() => undefined);
        throw err;
      }
      this.logger.error(
        `export ${claim.id}: failed for good after ${claim.attempts} attempts: ${String(err)}`,
      );
      // what an earlier attempt may have left goes too, unless another build holds the export by now
      if (await this.exports.markFailed(claim.id, String(err), claim))
        await this.storage.delete(key).catch(() => undefined);
    }
  }

  /** The document as a byte stream that renders a page only when storage asks for more. */
  private document(claim: ExportClaim, userId: string): Readable {
    let renewedAt = Date.now();
    const ctx: ExportContext = {
      exportId: claim.id,
      workspaceId: claim.workspace_id,
      userId,
      db: this.reader,
      checkpoint: async () => {
        if (this.stopping) throw new BuildStopped('shutting down');
        if (Date.now() - renewedAt < EXPORT_LEASE_MS / 3) return;
        if (!(await this.exports.renew(claim, EXPORT_LEASE_MS)))
          throw new LeaseLost('the build lost its lease');
        renewedAt = Date.now();
      },
    };
    return Readable.from(renderExport(this.sections, ctx, new Date()), { objectMode: false });
  }
}
