import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChannelWrites } from '../channels/writes';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import type { LinkPreview } from '../contract/events';
import { EventJobRelay } from '../events/event-job-relay';
import { LogTail } from '../events/log-tail';
import { isoTime, rows } from '../infra/database/sql';
import { Leadership } from '../infra/database/leadership';
import { JobProcessor, ProcessesJob } from '../infra/queue/job-processor';
import { QueueService } from '../infra/queue/queue.module';
import { Metrics } from '../ops/metrics';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { linkedUrls } from './linked-urls';
import { PreviewsService } from './previews.service';

export const PREVIEW_JOB = 'preview.message' as const;
/** Messages whose links are fetched at once, per process (each fetches its links side by side). */
const CONCURRENCY = 8;

/**
 * CONTRACT §26: every send or edit whose content has an http(s) link becomes a `preview.message` job
 * (an EventJobRelay over `message.created` and edit events; the previews' own `message.updated` has no
 * content and is not followed). Never on a send's request path.
 */
@Injectable()
export class PreviewRelay extends EventJobRelay {
  constructor(db: DataSource, queue: QueueService, tail: LogTail, leadership: Leadership, metrics: Metrics) {
    super(db, queue, tail, leadership, metrics, {
      name: 'previews',
      job: PREVIEW_JOB,
      types: ['message.created', 'message.updated'],
      where: `e.payload->'message'->>'content' ~* 'https?://'`,
    });
  }
}

interface MessageRow {
  content: string;
  previews: LinkPreview[];
  edited_at: string | null;
}

/**
 * One `preview.message` job: the message's links without a preview yet (the first 3 of its content,
 * linkedUrls) are fetched through PreviewsService (the outbound address rules, under the policy the
 * message was written under; the hour's cache) side by side, outside any transaction. Then, under the channel's order lock, with the message as it is
 * now: previews of links still written, in their order there, are stored, and `message.updated`
 * `{id, channel_id, previews, edited_at}` is appended when they changed. Nothing for a system
 * message, one sent with `skip_previews`, an unsent one, or while `link_previews_enabled` is off; a
 * link that yields nothing is simply left out (never an error to anyone).
 */
@Injectable()
@ProcessesJob(PREVIEW_JOB, { concurrency: CONCURRENCY })
export class PreviewEnricher extends JobProcessor<typeof PREVIEW_JOB> {
  constructor(
    private readonly db: DataSource,
    private readonly previews: PreviewsService,
    private readonly workspaces: WorkspacesService,
    private readonly writes: ChannelWrites,
  ) {
    super();
  }

  async handle(job: { eventId: string }): Promise<void> {
    const [target] = await rows<
      { workspace_id: string; channel_id: string; message_id: string; allow_private: boolean } & MessageRow
    >(
      this.db.manager,
      `SELECT m.workspace_id, m.channel_id, m.id AS message_id, m.content, m.previews, m.previews_allow_private AS allow_private
         FROM events e JOIN messages m ON m.id = (e.payload->'message'->>'id')::uuid AND m.workspace_id = e.workspace_id
        WHERE e.id = $1 AND m.deleted_at IS NULL AND NOT m.skip_previews AND m.type <> 'system'`,
      [job.eventId],
    );
    if (!target) return;
    const have = new Set(target.previews.map((p) => p.url));
    const wanted = linkedUrls(target.content).filter((url) => !have.has(url));
    if (!wanted.length || !(await this.workspaces.settings(target.workspace_id)).link_previews_enabled)
      return;
    const found = (
      await Promise.all(
        wanted.map(async (url): Promise<LinkPreview | null> => {
          const outcome = await this.previews.summary(
            target.workspace_id,
            new URL(url).toString(),
            target.allow_private,
          );
          return outcome.kind === 'summary' ? { url, ...outcome.summary } : null;
        }),
      )
    ).filter((p): p is LinkPreview => p !== null);
    if (found.length) await this.store(target.workspace_id, target.channel_id, target.message_id, found);
  }

  private async store(
    workspaceId: string,
    channelId: string,
    messageId: string,
    found: LinkPreview[],
  ): Promise<void> {
    await this.db.transaction(async (m) => {
      const [s] = await this.writes.lock(m, workspaceId, [channelId]);
      if (!s) return;
      const [now] = await rows<MessageRow>(
        m,
        `SELECT content, previews, ${isoTime('edited_at')} AS edited_at FROM messages
          WHERE id = $1 AND channel_id = $2 AND deleted_at IS NULL FOR NO KEY UPDATE`,
        [messageId, channelId],
      );
      if (!now) return;
      // an edit meanwhile may have dropped a link, or written it again
      const known = new Map([...found, ...now.previews].map((p) => [p.url, p]));
      const next = linkedUrls(now.content).flatMap((url) => known.get(url) ?? []);
      if (JSON.stringify(next) === JSON.stringify(now.previews)) return;
      await m.query(`UPDATE messages SET previews = $2::jsonb WHERE id = $1`, [
        messageId,
        JSON.stringify(next),
      ]);
      await s.append('message.updated', {
        message: {
          id: messageId,
          channel_id: channelId,
          channel_external_id: s.channel.external_id,
          previews: next,
          edited_at: now.edited_at,
        },
      });
    });
  }
}

/** Runs the relay and the enricher in the `all` and `worker` roles. */
@Injectable()
export class PreviewWorkers implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('PreviewWorkers');
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly relay: PreviewRelay,
    private readonly enricher: PreviewEnricher,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.SERVICE_ROLE === 'api') return;
    this.queue.consume(this.enricher);
    this.relay.start();
    this.started = true;
    this.logger.log(`link previews running on the ${this.queue.kind} queue`);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.started) await this.relay.stop();
  }
}
