/** Rows per keyset page of a list section: one page of JSON text is in memory at a time. */
export const EXPORT_PAGE_SIZE = 1000;

/** The first keyset position of a list ordered by a uuid. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** The document's `format`: a reader can tell what it holds and which shape. */
export const EXPORT_FORMAT = 'chat-service/user-export';
export const EXPORT_FORMAT_VERSION = 1;

/** How sections read: one statement, its rows. */
export interface ExportReader {
  query<T>(sql: string, params: unknown[]): Promise<T[]>;
}

/** What a section reads with. */
export interface ExportContext {
  exportId: string;
  workspaceId: string;
  /** The exported user (`users.id`). */
  userId: string;
  /** Reads outside any transaction: each page is its own statement, so no snapshot is held for minutes. */
  db: ExportReader;
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

/** Items of a page per string the database answers: about 45 KB of JSON for messages. */
export const EXPORT_PART_ITEMS = 100;

/** One page of a list section, as the database answers it (see `pageSql`). */
export interface JsonPage<K> {
  /** The page's items as JSON texts, joined with commas in parts of EXPORT_PART_ITEMS items. */
  parts: string[];
  count: number;
  /** The keyset position of the page's last item (null for an empty page). */
  last: K | null;
}

/**
 * Wraps a statement answering one page of items (a `json` text column and the keyset columns,
 * ordered by `orderBy` and limited) into one answering the page in parts: each part a row of up to
 * EXPORT_PART_ITEMS items joined into one JSON text by the database, their count, and the keyset
 * columns of the part's last item.
 *
 * A few strings per page instead of a JS object and a string per item: a million-message build
 * allocates a few thousand objects, not millions, and each part stays under V8's large-object size
 * (a string of a whole page, ~450 KB, would be one).
 */
export function pageSql(select: string, orderBy: string, keyColumns: readonly string[]): string {
  const last = keyColumns.map((k) => `(array_agg(${k} ORDER BY ord DESC))[1] AS ${k}`).join(', ');
  return `WITH page AS (${select}),
    numbered AS (SELECT page.*, row_number() OVER (ORDER BY ${orderBy}) AS ord FROM page)
    SELECT string_agg(json, ',' ORDER BY ord) AS json, count(*)::int AS count, ${last}
      FROM numbered GROUP BY (ord - 1) / ${EXPORT_PART_ITEMS} ORDER BY (ord - 1) / ${EXPORT_PART_ITEMS}`;
}

/** Runs a `pageSql` statement; `lastOf` reads the keyset position from a part's key columns. */
export async function queryPage<R, K>(
  ctx: ExportContext,
  sql: string,
  params: unknown[],
  lastOf: (row: R) => K,
): Promise<JsonPage<K>> {
  const rows = await ctx.db.query<R & { json: string; count: number }>(sql, params);
  const tail = rows[rows.length - 1];
  return {
    parts: rows.map((r) => r.json),
    count: rows.reduce((n, r) => n + r.count, 0),
    last: tail ? lastOf(tail) : null,
  };
}

/**
 * A JSON array read in keyset pages: `page(after, limit)` answers up to `limit` items after `after`
 * (null: from the start) in a stable order. Each part of a page is yielded and let go of at once.
 */
export async function* keysetList<K>(
  ctx: ExportContext,
  page: (after: K | null, limit: number) => Promise<JsonPage<K>>,
  limit = EXPORT_PAGE_SIZE,
): AsyncIterable<string> {
  yield '[';
  let after: K | null = null;
  let first = true;
  for (;;) {
    const p = await page(after, limit);
    for (let i = 0; i < p.parts.length; i++) {
      if (!first) yield ',';
      first = false;
      const part = p.parts[i]!;
      p.parts[i] = '';
      yield part;
    }
    if (p.last !== null) after = p.last;
    if (p.count < limit || p.last === null) break;
    await ctx.checkpoint();
  }
  yield ']';
}

/**
 * A section that lists the user's rows of one table in keyset pages on one uuid column: `select` takes
 * $1 the user, $2 the workspace, $3 the last key of the previous page, $4 the page size, orders by
 * `column` and yields it alongside `json`.
 */
export function uuidKeyedSection(key: string, select: string, column: string): ExportSection {
  const page = pageSql(select, column, [column]);
  return {
    key,
    render: (ctx) =>
      keysetList<string>(ctx, (after, limit) =>
        queryPage(
          ctx,
          page,
          [ctx.userId, ctx.workspaceId, after ?? NIL_UUID, limit],
          (r: Record<string, string>) => r[column]!,
        ),
      ),
  };
}

/** A section whose value is one object (or null), read with one statement answering a `json` column. */
export async function* singleObject(
  ctx: ExportContext,
  sql: string,
  params: unknown[],
): AsyncIterable<string> {
  const rows = await ctx.db.query<{ json: string }>(sql, params);
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
