import { createHash } from 'crypto';
import { existsSync, readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import type { QueryRunner } from 'typeorm';

/**
 * The schema's SQL functions, one file each in src/database/functions/<name>.sql holding the whole
 * `CREATE OR REPLACE FUNCTION` (its current text), applied after the migrations by `runMigrations`:
 * a file whose checksum differs from the one `schema_functions` records (or that it does not record)
 * is run, and recorded, in one transaction with the others that changed; unchanged files cost one
 * SELECT. The migrations keep their history (the text each one created); the newest text wins here.
 *
 * A file may hold placeholders the database decides, filled in when it is applied:
 * - `{{schema}}`: the current schema, quoted (a call that must not depend on the search_path);
 * - `{{unicode_collate}}`: ` COLLATE "<c>"` with the first of pg_c_utf8, C.utf8, C.UTF-8 the server
 *   has (Unicode case mapping whatever the database default), or nothing.
 */
export interface SchemaFunctionFile {
  /** The file's name without `.sql`: the function it creates. */
  name: string;
  text: string;
  /** sha256 of the file's text. */
  checksum: string;
}

/**
 * dist/database/functions (copied there by nest-cli.json's `assets`), or src/database/functions under
 * ts-node and jest, or from a dist/ compiled without the assets.
 */
export function functionsDir(): string {
  const candidates = [
    join(__dirname, 'functions'),
    join(__dirname, '..', '..', 'src', 'database', 'functions'),
  ];
  const found = candidates.find((d) => existsSync(d) && readdirSync(d).some((f) => f.endsWith('.sql')));
  if (!found) throw new Error(`no SQL function files in ${candidates.join(' or ')}`);
  return found;
}

export function loadFunctionFiles(dir: string = functionsDir()): SchemaFunctionFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), 'utf8');
      return {
        name: f.slice(0, -'.sql'.length),
        text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    });
}

interface RenderContext {
  schema: string;
  unicode_collate: string;
}

async function renderContext(qr: QueryRunner): Promise<RenderContext> {
  const rows = (await qr.query(
    `SELECT quote_ident(current_schema()) AS schema,
            (SELECT collname FROM pg_collation
              WHERE collname IN ('pg_c_utf8', 'C.utf8', 'C.UTF-8') AND collencoding IN (-1, 6)
              ORDER BY array_position(ARRAY['pg_c_utf8', 'C.utf8', 'C.UTF-8']::name[], collname) LIMIT 1) AS collation`,
  )) as { schema: string; collation: string | null }[];
  const row = rows[0]!;
  return { schema: row.schema, unicode_collate: row.collation ? ` COLLATE "${row.collation}"` : '' };
}

function render(file: SchemaFunctionFile, ctx: RenderContext): string {
  return file.text.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => {
    if (key === 'schema' || key === 'unicode_collate') return ctx[key];
    throw new Error(`src/database/functions/${file.name}.sql: unknown placeholder ${whole}`);
  });
}

/**
 * Runs the files whose checksum `schema_functions` does not record, and records them, in one
 * transaction on `qr` (which must not be in one). Records of files that are gone are deleted (the
 * function itself stays until a migration drops it). Answers the names of the functions applied.
 *
 * The caller serialises concurrent starts (runMigrations holds its advisory lock on PostgreSQL).
 */
export async function applySchemaFunctions(qr: QueryRunner, files: SchemaFunctionFile[]): Promise<string[]> {
  const recorded = new Map(
    (
      (await qr.query(`SELECT name, checksum FROM schema_functions`)) as { name: string; checksum: string }[]
    ).map((r) => [r.name, r.checksum]),
  );
  const changed = files.filter((f) => recorded.get(f.name) !== f.checksum);
  const names = new Set(files.map((f) => f.name));
  const gone = [...recorded.keys()].filter((n) => !names.has(n));
  if (!changed.length && !gone.length) return [];

  await qr.startTransaction();
  try {
    const ctx = await renderContext(qr);
    for (const f of changed) {
      try {
        await qr.query(render(f, ctx));
      } catch (e) {
        throw new Error(
          `src/database/functions/${f.name}.sql: ${e instanceof Error ? e.message : String(e)}`,
          {
            cause: e,
          },
        );
      }
      await qr.query(
        `INSERT INTO schema_functions (name, checksum, applied_at) VALUES ($1, $2, now())
         ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = excluded.applied_at`,
        [f.name, f.checksum],
      );
    }
    if (gone.length) await qr.query(`DELETE FROM schema_functions WHERE name = ANY($1::text[])`, [gone]);
    await qr.commitTransaction();
  } catch (e) {
    await qr.rollbackTransaction().catch(() => undefined);
    throw e;
  }
  return changed.map((f) => f.name);
}

/** A function of the schema: name, identity arguments, and PostgreSQL's text of it. */
interface FunctionDef {
  name: string;
  args: string;
  def: string;
}

/**
 * The current schema's own functions (not an extension's, such as pg_trgm's); with `touched`, only
 * those the current transaction created or replaced (their pg_proc row is its own, even when the text
 * stayed the same).
 */
async function schemaFunctions(qr: QueryRunner, touched = false): Promise<FunctionDef[]> {
  return (await qr.query(
    `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, pg_get_functiondef(p.oid) AS def
       FROM pg_proc p
      WHERE p.pronamespace = current_schema()::regnamespace AND p.prokind IN ('f', 'p')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d
                         WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
        ${touched ? `AND p.xmin::text = (pg_current_xact_id()::text::bigint % 4294967296)::text` : ''}
      ORDER BY 1, 2`,
  )) as FunctionDef[];
}

const signature = (f: FunctionDef) => `${f.name}(${f.args})`;

/**
 * What differs between the database's functions and the files (`npm run check:schema`): a function
 * whose text is not its file's, a function no file states, a file whose function the database lacks
 * or that creates a function of another name. Each file is run in a transaction that is rolled back,
 * and PostgreSQL's text of what it created (`pg_get_functiondef`) compared with the text of what was
 * there. `qr` must not be in a transaction.
 */
export async function functionDrift(qr: QueryRunner, files: SchemaFunctionFile[]): Promise<string[]> {
  const before = new Map((await schemaFunctions(qr)).map((f) => [signature(f), f]));
  const stated = new Map<string, { file: string; fn: FunctionDef }>();
  await qr.startTransaction();
  try {
    const ctx = await renderContext(qr);
    for (const f of files) {
      await qr.query(render(f, ctx));
      for (const fn of await schemaFunctions(qr, true)) {
        if (!stated.has(signature(fn))) stated.set(signature(fn), { file: f.name, fn });
      }
    }
  } finally {
    await qr.rollbackTransaction();
  }
  const out: string[] = [];
  for (const [sig, { file, fn }] of stated) {
    const where = `src/database/functions/${file}.sql`;
    if (fn.name !== file)
      out.push(`function ${sig}: ${where} creates it, but a file is named as its function`);
    const actual = before.get(sig);
    if (!actual) out.push(`function ${sig}: ${where} states it, the database lacks it`);
    else if (actual.def !== fn.def)
      out.push(
        `function ${sig}: the database's text differs from ${where}${firstDifference(actual.def, fn.def)}`,
      );
  }
  for (const sig of before.keys()) {
    if (!stated.has(sig))
      out.push(`function ${sig}: in the database, but no file in src/database/functions states it`);
  }
  return out;
}

function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n');
  const b = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `, from line ${i + 1}:\n    database: ${a[i]?.trim() ?? '(end)'}\n    file:     ${b[i]?.trim() ?? '(end)'}`;
  }
  return '';
}
