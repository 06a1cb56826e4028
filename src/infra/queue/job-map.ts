/**
 * Every background job and its payload, in one place (the queue can only carry what this map allows).
 * Payloads are small JSON: ids, never whole rows; the database is the source of truth and a job
 * re-reads what it needs.
 */
export interface JobMap {
  /** One HTTP attempt of a webhook delivery; `attempt` is the attempt number it will be (1-based). */
  'webhook.deliver': { deliveryId: string; attempt: number };
  /** The push notifications of one `message.created` event of the log. */
  'push.message': { eventId: string };
  /** The link previews of one message event of the log (CONTRACT §26: a send, or an edit). */
  'preview.message': { eventId: string };
  /** Builds one user export (CONTRACT §20); the job id is the export id. */
  'export.build': { exportId: string };
  /** Finishes one user erasure (CONTRACT §20) in batches; the job id is the erasure id. */
  'user.erase': { erasureId: string };
}

export type JobName = keyof JobMap;
export type JobData<N extends JobName> = JobMap[N];
