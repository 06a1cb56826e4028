import type { QueryRunner } from 'typeorm';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { DatabaseHandle, openDatabase, runMigrations } from '../../src/infra/database/data-source.factory';
import { functionDrift, functionsDir, loadFunctionFiles } from '../../src/database/schema-functions';
import { cloneDatabase, isIntegration } from '../support/databases';

/**
 * The SQL functions' repeatable step (src/infra/database/schema-functions.ts), on a database migrated
 * as the tests' template is: at each start a changed file is applied and recorded, an unchanged one is
 * not; a file that fails leaves nothing applied; the drift check names a function whose text is not
 * its file's and one without a file. The files are copies in a scratch directory, edited there.
 */

interface Started {
  handle: DatabaseHandle;
  functions: string[];
  newer: string[];
}

describe('SQL function files applied after the migrations', () => {
  let dir: string;
  let drop: (() => Promise<void>) | undefined;
  let url: string | undefined;
  /** Embedded: the state the previous start left, as a data directory dump the next start loads. */
  let dump: string | undefined;
  const open: DatabaseHandle[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chat-functions-'));
    cpSync(functionsDir(), join(dir, 'functions'), { recursive: true });
    if (isIntegration()) {
      const db = await cloneDatabase();
      url = db.url;
      drop = db.drop;
    } else {
      dump = process.env.CHAT_TEST_PGLITE_TEMPLATE;
    }
  });

  afterAll(async () => {
    for (const h of open) await close(h);
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  async function close(h: DatabaseHandle): Promise<void> {
    if (h.dataSource.isInitialized) await h.dataSource.destroy();
    await h.closeEngine();
  }

  /** A start of the service: open the database, run the migrations and the function step. */
  async function start(): Promise<Started> {
    const handle = url
      ? await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 2 })
      : await openDatabase({ dataDir: `memory://${dump ?? ''}` });
    open.push(handle);
    const { functions, newer } = await runMigrations(handle, { functionsDir: join(dir, 'functions') });
    return { handle, functions, newer };
  }

  /** Ends a start; embedded, what it left becomes the next start's data directory. */
  async function stop(h: DatabaseHandle): Promise<void> {
    if (h.dump) {
      const file = join(dir, `state-${Date.now()}.tar`);
      writeFileSync(file, Buffer.from(await (await h.dump()).arrayBuffer()));
      dump = file;
    }
    await close(h);
    open.splice(open.indexOf(h), 1);
  }

  async function recorded(h: DatabaseHandle): Promise<Map<string, { checksum: string; applied_at: string }>> {
    const rows = await h.dataSource.query<{ name: string; checksum: string; applied_at: string }[]>(
      `SELECT name, checksum, applied_at::text AS applied_at FROM schema_functions`,
    );
    return new Map(rows.map((r) => [r.name, r]));
  }

  /** On the runner when there is one: PGlite's one connection is the runner's until it is released. */
  async function definition(on: DatabaseHandle | QueryRunner, name: string): Promise<string> {
    const q = 'dataSource' in on ? on.dataSource.createQueryRunner() : on;
    const rows = (await q.query(
      `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p
        WHERE p.proname = $1 AND p.pronamespace = current_schema()::regnamespace`,
      [name],
    )) as { def: string }[];
    if (q !== on) await q.release();
    return rows.map((r) => r.def).join('\n');
  }

  function edit(name: string, fn: (text: string) => string): void {
    const file = join(dir, 'functions', `${name}.sql`);
    writeFileSync(file, fn(readFileSync(file, 'utf8')));
  }

  it('applies a changed file at the next start and leaves the unchanged ones alone', async () => {
    const files = loadFunctionFiles(join(dir, 'functions'));
    expect(files.map((f) => f.name)).toEqual([
      'chat_count_members',
      'chat_new_event_id',
      'chat_search_doc',
      'chat_send_message',
      'chat_send_messages',
      'search_document',
      'search_tokens',
    ]);

    // the template was migrated with these very files: nothing to do
    let s = await start();
    expect(s.functions).toEqual([]);
    const before = await recorded(s.handle);
    expect([...before.keys()].sort()).toEqual(files.map((f) => f.name));
    for (const f of files) expect(before.get(f.name)?.checksum).toBe(f.checksum);
    await stop(s.handle);

    edit('search_document', (t) =>
      t.replace('      BEGIN\n', '      BEGIN\n        -- changed by the test\n'),
    );
    s = await start();
    expect(s.functions).toEqual(['search_document']);
    expect(await definition(s.handle, 'search_document')).toContain('-- changed by the test');
    const after = await recorded(s.handle);
    expect(after.get('search_document')?.checksum).toBe(
      loadFunctionFiles(join(dir, 'functions')).find((f) => f.name === 'search_document')?.checksum,
    );
    expect(after.get('search_document')?.applied_at).not.toBe(before.get('search_document')?.applied_at);
    for (const name of [
      'chat_count_members',
      'chat_search_doc',
      'chat_send_message',
      'chat_send_messages',
      'search_tokens',
    ])
      expect(after.get(name)).toEqual(before.get(name));
    // the function the search documents are made of still indexes as before
    const [doc] = await s.handle.dataSource.query<{ d: string }[]>(
      `SELECT search_document('Hello, wörld')::text AS d`,
    );
    expect(doc?.d).toBe(`'hello':1 'wörld':2`);
    await stop(s.handle);

    s = await start();
    expect(s.functions).toEqual([]);
    expect(await recorded(s.handle)).toEqual(after);
    await stop(s.handle);
  });

  it('applies nothing when one changed file fails, and names it', async () => {
    edit('search_tokens', (t) => t.replace('      BEGIN\n', '      BEGIN\n        -- changed again\n'));
    edit('chat_send_message', (t) => t.replace('LANGUAGE plpgsql', 'LANGUAGE plpgsql_nonexistent'));
    const handle = url
      ? await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 2 })
      : await openDatabase({ dataDir: `memory://${dump ?? ''}` });
    open.push(handle);
    const before = await recorded(handle);
    await expect(runMigrations(handle, { functionsDir: join(dir, 'functions') })).rejects.toThrow(
      /chat_send_message\.sql: .*plpgsql_nonexistent/,
    );
    expect(await recorded(handle)).toEqual(before);
    expect(await definition(handle, 'search_tokens')).not.toContain('-- changed again');
    await stop(handle);
    edit('chat_send_message', (t) => t.replace('LANGUAGE plpgsql_nonexistent', 'LANGUAGE plpgsql'));
    edit('search_tokens', (t) => t.replace('        -- changed again\n', ''));
  });

  it('a build older than the database (a newer build migrated it, a rolling upgrade) leaves the newer functions alone', async () => {
    const NEWER = 'NewerBuild9999999999999';
    edit('search_tokens', (t) => t.replace('      BEGIN\n', '      BEGIN\n        -- the newer build\n'));
    let s = await start(); // the newer build: its text, and a migration the older build does not have
    expect(s.functions).toEqual(['search_tokens']);
    await s.handle.dataSource.query(`INSERT INTO migrations (timestamp, name) VALUES (9999999999999, $1)`, [
      NEWER,
    ]);
    const before = await recorded(s.handle);
    await stop(s.handle);

    edit('search_tokens', (t) => t.replace('        -- the newer build\n', ''));
    s = await start(); // the older build, with its older text, starting while the newer one serves
    expect(s.newer).toEqual([NEWER]);
    expect(s.functions).toEqual([]);
    expect(await definition(s.handle, 'search_tokens')).toContain('-- the newer build');
    expect(await recorded(s.handle)).toEqual(before);

    // without the newer migration it is this build's schema again: its text goes back
    await s.handle.dataSource.query(`DELETE FROM migrations WHERE name = $1`, [NEWER]);
    await stop(s.handle);
    s = await start();
    expect(s.functions).toEqual(['search_tokens']);
    expect(await definition(s.handle, 'search_tokens')).not.toContain('-- the newer build');
    await stop(s.handle);
  });

  it('the drift check names a function whose text is not its file and one that has no file', async () => {
    // a database of its own: the others' start from the scratch files
    const db = isIntegration() ? await cloneDatabase() : undefined;
    const handle = db
      ? await openDatabase({ databaseUrl: db.url, dataDir: '', poolSize: 2 })
      : await openDatabase({ dataDir: `memory://${process.env.CHAT_TEST_PGLITE_TEMPLATE ?? ''}` });
    await runMigrations(handle);
    const qr = handle.dataSource.createQueryRunner();
    try {
      expect(await functionDrift(qr, loadFunctionFiles())).toEqual([]);
      // edited in the database, behind the files' back
      const def = await definition(qr, 'search_tokens');
      await qr.query(def.replace("kind := 'w';", "kind := 'x';"));
      await qr.query(
        `CREATE FUNCTION stray_helper(n integer) RETURNS integer LANGUAGE sql AS 'SELECT n + 1'`,
      );
      const problems = await functionDrift(qr, loadFunctionFiles());
      expect(problems).toEqual([
        expect.stringMatching(
          /^function search_tokens\(doc text\): the database's text differs from src\/database\/functions\/search_tokens\.sql, from line \d+:\n {4}database: kind := 'x';\n {4}file: {5}kind := 'w';$/,
        ),
        'function stray_helper(n integer): in the database, but no file in src/database/functions states it',
      ]);
      // the check rolled its own applying back: the database still has the edit
      expect(await definition(qr, 'search_tokens')).toContain("kind := 'x';");
    } finally {
      await qr.release();
      await close(handle);
      await db?.drop();
    }
  });

  (isIntegration() ? it : it.skip)('instances starting together apply each changed file once', async () => {
    edit('search_document', (t) => t.replace('-- changed by the test', '-- changed for the race'));
    const handles = await Promise.all(
      [1, 2, 3].map(() => openDatabase({ databaseUrl: url!, dataDir: '', poolSize: 2 })),
    );
    open.push(...handles);
    const results = await Promise.all(
      handles.map((h) => runMigrations(h, { functionsDir: join(dir, 'functions') })),
    );
    expect(results.flatMap((r) => r.functions)).toEqual(['search_document']);
    expect(await definition(handles[0]!, 'search_document')).toContain('-- changed for the race');
  });
});
