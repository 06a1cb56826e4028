import type { DataSource } from 'typeorm';

/** Rows per keyset page of a list section: one page of JSON text is in memory at a time. */
export const EXPORT_PAGE_SIZE = 1000;

/** The first keyset position of a list ordered by a uuid. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** The document's `format`: a reader can tell what it holds and which shape. */
export const EXPORT_FORMAT = 'chat-service/user-export';
export const EXPORT_FORMAT_VERSION = 1;

/** What a section reads with. */
export interface ExportContext {
  exportId: string;
  workspaceId: string;
  /** The exported user (`users.id`). */
  userId: string;
  /** Reads outside any transaction: each page is its own statement, so no snapshot is held for minutes. */
  db: DataSource;
  /**
   * Called between pages: renews the build's lease, and throws when the build must stop (the lease
   * went to another worker, or the process is shutting down).
   */
  checkpoint(): Promise<void>;
}

/**
 * One top-level key of the export document and how its value is written. A section yields its value
 * as JSON text in chunks (a list section one page at a time, see `keysetList`), reading only the
 * exported user's own data in the export's workspace. To add a section (flags the user raised, bans),
 * write one and list it in `sections/index.ts`.
 */
export interface ExportSection {
  /** The key in the document: unique, snake_case. */
  readonly key: string;
  render(ctx: ExportContext): AsyncIterable<string>;
}

/** One rendered item of a list and its keyset position. */
export interface KeyedJson<K> {
  /** The item as JSON text (rendered by the database: `json_build_object(...)::text`). */
  json: string;
  key: K;
}

/**
 * A JSON array read in keyset pages: `page(after, limit)` answers up to `limit` items after `after`
 * (null: from the start) in a stable order. Each page is yielded as one chunk and then dropped.
 */
export async function* keysetList<K>(
  ctx: ExportContext,
  page: (after: K | null, limit: number) => Promise<KeyedJson<K>[]>,
  limit = EXPORT_PAGE_SIZE,
): AsyncIterable<string> {
  yield '[';
  let after: K | null = null;
  let first = true;
  for (;;) {
    const rows = await page(after, limit);
    const last = rows[rows.length - 1];
    if (last) {
      yield (first ? '' : ',') + rows.map((r) => r.json).join(',');
      first = false;
      after = last.key;
    }
    if (rows.length < limit) break;
    await ctx.checkpoint();
  }
  yield ']';
}

/** A section whose value is one object (or null), read with one statement answering a `json` column. */
export async function* singleObject(
  ctx: ExportContext,
  sql: string,
  params: unknown[],
): AsyncIterable<string> {
  const rows: { json: string }[] = await ctx.db.query(sql, params);
  yield rows[0]?.json ?? 'null';
}

/**
 * The whole document, as chunks of JSON text: a header, then each section under its key, in order.
 * Nothing is buffered here: the caller pipes it to storage, which pulls the next chunk when it wants one.
 */
export async function* renderExport(
  sections: readonly ExportSection[],
  ctx: ExportContext,
  generatedAt: Date,
): AsyncIterable<string> {
  const keys = new Set<string>(['format', 'version', 'export_id', 'workspace_id', 'generated_at']);
  yield (
    `{"format":${JSON.stringify(EXPORT_FORMAT)},"version":${EXPORT_FORMAT_VERSION},` +
    `"export_id":${JSON.stringify(ctx.exportId)},"workspace_id":${JSON.stringify(ctx.workspaceId)},` +
    `"generated_at":${JSON.stringify(generatedAt.toISOString())}`
  );
  for (const section of sections) {
    if (keys.has(section.key)) throw new Error(`two export sections write "${section.key}"`);
    keys.add(section.key);
    yield `,${JSON.stringify(section.key)}:`;
    yield* section.render(ctx);
    await ctx.checkpoint();
  }
  yield '}';
}
