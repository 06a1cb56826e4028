/**
 * Issue 12: a TypeScript client generated from /docs-json carries a chat flow with no casts. The test
 * generates the client with @hey-api/openapi-ts into a temp dir, type-checks test/openapi/client-flow/
 * chat-flow.ts against it with `tsc --strict --noEmit`, then runs it against the service. Every answer
 * the flow gets is checked against the document: its status must be documented for the operation and
 * its body must match the documented schema exactly (no undocumented fields).
 */
import { execFile } from 'child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { promisify } from 'util';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';
import { checkSchema, findOperation, OpenApiDocument, responseSchema } from './openapi-schema';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const FLOW = join(__dirname, 'client-flow', 'chat-flow.ts');
const OPENAPI_TS = join(ROOT, 'node_modules', '@hey-api', 'openapi-ts', 'bin', 'run.js');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** What the compiled flow module exports (its own types are checked by tsc in the temp project). */
interface FlowModule {
  chatFlow: (opts: {
    baseUrl: string;
    apiKey: string;
    apiSecret: string;
    fetch?: typeof fetch;
  }) => Promise<any>;
}

async function node(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      cwd,
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string; message: string };
    return {
      code: typeof err.code === 'number' ? err.code : 1,
      output: `${err.stdout ?? ''}${err.stderr ?? ''}${err.message}`,
    };
  }
}

describe('OpenAPI: a client generated from /docs-json', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let dir: string;

  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.http().get('/docs-json').expect(200)).body as OpenApiDocument;
    dir = mkdtempSync(join(tmpdir(), 'chat-client-'));
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    // the generator takes "./file" as a path ("file" alone reads as a registry shorthand)
    const gen = await node([OPENAPI_TS, '-i', './openapi.json', '-o', './client'], dir);
    if (gen.code !== 0) throw new Error(`@hey-api/openapi-ts failed:\n${gen.output}`);
    copyFileSync(FLOW, join(dir, 'chat-flow.ts'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          lib: ['ES2022', 'DOM', 'DOM.Iterable'],
          types: [],
          outDir: 'out',
        },
        include: ['chat-flow.ts', 'client/**/*.ts'],
      }),
    );
  }, 300_000);

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('names every SDK function after its operationId', () => {
    const sdk = readFileSync(join(dir, 'client', 'sdk.gen.ts'), 'utf8');
    for (const name of [
      'sendMessage',
      'listMyChannels',
      'getChannel',
      'banUser',
      'markChannelRead',
      'pinMessage',
    ])
      expect(sdk).toContain(`export const ${name} = `);
    expect(sdk).not.toMatch(/Controller/);
  });

  it('the chat flow is written without casts, non-null assertions or any', () => {
    const code = readFileSync(FLOW, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    expect(code).not.toMatch(
      /\bas\s+(?!const\b)[A-Za-z{[(]|<[A-Z]\w*>\s*\w|\bany\b|@ts-|\w[!]\.|\w!\)|\w!;|\w!,/,
    );
  });

  it('type-checks under tsc --strict --noEmit', async () => {
    const tsc = await node([TSC, '-p', 'tsconfig.json', '--strict', '--noEmit'], dir);
    expect(tsc.output).toBe('');
    expect(tsc.code).toBe(0);
  }, 300_000);

  it('runs against the service, and every answer is documented and matches its schema', async () => {
    const emit = await node([TSC, '-p', 'tsconfig.json', '--noCheck'], dir);
    expect(emit.code).toBe(0);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const flow = require(join(dir, 'out', 'chat-flow.js')) as FlowModule;

    const ws = await newWorkspace(t);
    const problems: string[] = [];
    const calls: string[] = [];
    const checkingFetch: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      const res = await fetch(req);
      const url = new URL(req.url);
      const found = findOperation(doc, req.method, url.pathname);
      if (!found) {
        problems.push(`${req.method} ${url.pathname}: no such operation in the document`);
        return res;
      }
      const id = found.op.operationId ?? `${req.method} ${found.path}`;
      calls.push(`${id} ${res.status}`);
      if (!found.op.responses[String(res.status)])
        problems.push(`${id}: answered ${res.status}, which is not documented`);
      const schema = responseSchema(found.op, res.status);
      if (schema) problems.push(...checkSchema(doc, schema, await res.clone().json(), id));
      return res;
    };

    const r = await flow.chatFlow({
      baseUrl: t.baseUrl,
      apiKey: ws.apiKey,
      apiSecret: ws.apiSecret,
      fetch: checkingFetch,
    });

    expect(problems).toEqual([]);
    expect(calls).toEqual(
      expect.arrayContaining([
        'upsertUsers 200',
        'issueUserToken 200',
        'createChannel 201',
        'sendMessage 201',
        'sendMessage 200',
      ]),
    );
    expect(r.userIds).toHaveLength(2);
    expect(r.memberCount).toBe(2);
    expect([r.firstSendStatus, r.replayStatus, r.replayHeader]).toEqual([201, 200, 'true']);
    expect(r.history.map((m: { content: string }) => m.content)).toEqual(['Hi Ana', 'Hello Bo']);
    expect(r.history[0].quoted_message.content).toBe('Hello Bo');
    expect(r.history[1].mentions.map((m: { external_id: string }) => m.external_id)).toEqual(['bo']);
    expect(r.replayedId).toBe(r.history[1].id);
    expect(r.reacted.reactions).toEqual([{ emoji: '🎉', count: 1, reacted_by_me: true }]);
    expect(r.pinned.pinned_at).toEqual(expect.any(String));
    expect(r.pinned.pinned_by.external_id).toBe('ana');
    const [before] = r.boChannelsBefore;
    expect([before.id, before.role, before.unread_count, before.mention_unread_count]).toEqual([
      r.channelId,
      'member',
      1,
      1,
    ]);
    expect(before.last_message.content).toBe('Hi Ana');
    const [after] = r.boChannelsAfter;
    expect([after.unread_count, after.mention_unread_count, after.last_read_at]).toEqual([
      0,
      0,
      r.lastReadAt,
    ]);
    expect([r.missingChannelStatus, r.missingChannelCode]).toEqual([404, 'NOT_FOUND']);
  }, 300_000);
});
