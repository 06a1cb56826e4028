import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { caseOf } from './cases';
import { describeExchange, execute, NoAnswer, problemWith } from './execute';
import { Operation, operationsOf } from './openapi';
import { closeRawAgent, rawRequest } from './raw-http';
import { World } from './world';

/**
 * Issue 11, finding 4: schema-driven fuzzing of every operation `/docs-json` lists. Each case is a
 * request with the route's own credentials (or hostile ones), path parameters that name real
 * resources or hostile strings, the documented query parameters valid or spoiled, and a body built
 * from the request schema with one hostile change (wrong type, deep nesting, NUL, lone surrogate,
 * huge string, extra or missing field) or no JSON at all. No answer may be a 5xx, and every 4xx has
 * the contract's error body.
 *
 * FUZZ_RUNS   cases per operation (default 25)
 * FUZZ_SEED   base seed (default 11); each operation's seed is derived from it and its name
 * FUZZ_ONLY   only operations whose `METHOD /path` contains this text
 * FUZZ_PATH   with FUZZ_SEED and FUZZ_ONLY: replay one counterexample (fast-check's path)
 * FUZZ_SHRINK=1 shrinks a failing case to a smaller one (off by default: each shrinking step is
 *             another request, and a server that stopped answering would make it run for hours)
 * FUZZ_REPORT=1 prints the answers' statuses per operation; =2 every request and answer too
 *
 * A request that gets no answer at all ends the run at once: the server is stuck, and every later
 * case would only wait for its own timeout.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 11);
const ONLY = process.env.FUZZ_ONLY;
const REPLAY_PATH = process.env.FUZZ_PATH;

/**
 * Every request has its own timeout (raw-http), but a case also awaits the world's set-up; a case that
 * settles in none of that time ends the run as a NoAnswer naming the case and the set-up still pending,
 * instead of waiting for the test's half-hour timeout with nothing to show.
 */
const CASE_MS = 90_000;
function withinCase<T>(run: Promise<T>, op: Operation, c: unknown, world: World): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new NoAnswer(
            `${op.key}: the case did not settle within ${CASE_MS} ms; world set-up pending: ${world.pending().join(', ') || 'none'}\n` +
              `  case: ${fc.stringify(c).slice(0, 1_500)}`,
          ),
        ),
      CASE_MS,
    );
  });
  return Promise.race([run, late]).finally(() => clearTimeout(timer));
}

/** A stable seed per operation: adding a route does not change the cases of the others. */
function seedOf(op: Operation): number {
  let h = 0x811c9dc5;
  for (const ch of op.key) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return (h ^ SEED) | 0;
}

describe('fuzzing every route of the OpenAPI document (issue 11)', () => {
  let t: TestApp;
  let ops: Operation[];
  let db: DataSource;

  beforeAll(async () => {
    // sends are what most routes act on: the per-user limit would turn every later send into a 429
    t = await startTestApp({ SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000' });
    const doc = await rawRequest(t.baseUrl, { method: 'GET', path: '/docs-json', headers: {} });
    db = t.app.get(DataSource);
    ops = operationsOf(doc.json as Parameters<typeof operationsOf>[0]);
  }, 180_000);

  afterAll(async () => {
    closeRawAgent();
    await t?.close();
  });

  it('documents the query parameters of /events and /me/sync', () => {
    const query = (key: string) =>
      ops
        .find((o) => o.key === key)
        ?.params.filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort();
    expect(query('GET /v1/channels/{id}/events')).toEqual(['after_seq', 'limit']);
    expect(query('GET /v1/me/sync')).toEqual(['limit', 'since']);
  });

  it(
    'answers no malformed request with a 5xx, and every 4xx in the contract error shape',
    async () => {
      const selected = ops.filter((o) => !ONLY || o.key.includes(ONLY));
      if (!ONLY) expect(selected.length).toBeGreaterThanOrEqual(80);
      const failures: string[] = [];
      const report: string[] = [];
      let stuck: string | undefined;
      for (const op of selected) {
        if (stuck) break;
        const world = new World(t.baseUrl, (q, params) => db.query(q, params));
        const statuses = new Map<number, number>();
        const seed = seedOf(op);
        const details = await fc.check(
          fc.asyncProperty(caseOf(op), async (c) => {
            if (stuck) return;
            const x = await withinCase(execute(t.baseUrl, world, op, c), op, c, world).catch(
              (err: unknown) => {
                if (err instanceof NoAnswer) stuck = err.message;
                throw err;
              },
            );
            statuses.set(x.response.status, (statuses.get(x.response.status) ?? 0) + 1);
            if (process.env.FUZZ_REPORT === '2') {
              const line = `${x.response.status} ${x.request.method} ${x.request.path} ${x.request.body?.toString('utf8') ?? ''} → ${x.response.text}`;
              report.push(`  ${line.slice(0, 400)}`);
            }
            const problem = problemWith(x.response);
            if (problem) throw new Error(`${op.key} ${problem}\n${describeExchange(x)}`);
            world.afterAnswer(op.method, op.path, x.pathRefs, x.response);
          }),
          { numRuns: RUNS, seed, path: REPLAY_PATH, endOnFailure: process.env.FUZZ_SHRINK !== '1' },
        );
        report.push(
          `${op.key.padEnd(56)} ${[...statuses]
            .sort(([a], [b]) => a - b)
            .map(([s, n]) => `${s}×${n}`)
            .join(' ')}`,
        );
        if (details.failed) {
          const err =
            details.errorInstance instanceof Error
              ? details.errorInstance.message
              : String(details.errorInstance);
          failures.push(
            [
              err,
              `  case: ${fc.stringify(details.counterexample).slice(0, 1_500)}`,
              `  replay: FUZZ_SEED=${SEED} FUZZ_ONLY='${op.key}' FUZZ_PATH='${details.counterexamplePath}' ` +
                `NODE_OPTIONS=--experimental-vm-modules npx jest test/fuzz (fast-check seed ${seed})`,
            ].join('\n'),
          );
        }
      }
      if (process.env.FUZZ_REPORT)
        console.log(`fuzz: ${RUNS} cases per operation, seed ${SEED}\n${report.join('\n')}`);
      if (stuck) throw new Error(`the server stopped answering; the run ended there:\n${stuck}`);
      if (failures.length)
        throw new Error(`${failures.length} operation(s) failed:\n\n${failures.join('\n\n')}`);
    },
    30 * 60_000,
  );
});
