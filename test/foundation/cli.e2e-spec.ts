import { spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { CliIo, runCli, USAGE } from '../../src/cli';
import { startTestApp } from '../support/app';
import { cloneDatabase, isIntegration } from '../support/databases';
import { Client } from '../support/fixtures';

/**
 * The operator CLI against a real database: a data directory on disk on `npm test`, a cloned
 * PostgreSQL database on `npm run test:integration`. What it creates must work through the HTTP API.
 */
/** Every migration on a fresh on-disk PGlite takes about 25 s on a quiet 2-core machine, several times that on a busy one. */
const SLOW_MS = 240_000;

describe('operator CLI', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    if (isIntegration()) {
      const db = await cloneDatabase();
      env = {
        DATABASE_URL: db.url,
        SERVICE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'silent',
      };
      cleanup = db.drop;
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'chat-cli-'));
      env = { SERVICE_DATA_DIR: dir, LOG_LEVEL: 'silent' };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    }
  });
  afterAll(async () => cleanup());

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const io: CliIo = { out: (s) => (out += s), err: (s) => (err += s) };
    const code = await runCli(argv, io, env);
    return { code, out, err };
  }

  it(
    'migrate applies the migrations (idempotently)',
    async () => {
      const first = await cli('migrate');
      expect(first.code).toBe(0);
      expect(first.out).toMatch(/^\d+ migration\(s\) applied/);
      const second = await cli('migrate');
      expect(second.code).toBe(0);
      expect(second.out).toMatch(/^0 migration\(s\) applied/);
    },
    SLOW_MS,
  );

  it(
    'workspace create/list/delete work, and the printed pair works on the HTTP API',
    async () => {
      const created = await cli('workspace', 'create', '--name', 'Acme');
      expect(created.code).toBe(0);
      const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)$`, 'm').exec(created.out)?.[1];
      const id = field('id')!;
      const apiKey = field('api_key')!;
      const apiSecret = field('api_secret')!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(apiKey).toMatch(/^pk_/);
      expect(apiSecret).toMatch(/^sk_/);

      const json = await cli('workspace', 'create', '--name=Beta Corp', '--json');
      expect(json.code).toBe(0);
      const beta = JSON.parse(json.out) as { id: string; name: string; api_key: string; api_secret: string };
      expect(beta).toMatchObject({
        name: 'Beta Corp',
        api_key: expect.stringMatching(/^pk_/),
        api_secret: expect.stringMatching(/^sk_/),
      });

      const list = await cli('workspace', 'list');
      expect(list.code).toBe(0);
      expect(list.out.split('\n')[0]).toMatch(/^ID\s+NAME\s+API_KEY\s+CREATED_AT$/);
      expect(list.out).toContain(id);
      expect(list.out).toContain(apiKey);
      expect(list.out).toContain('Beta Corp');
      expect(list.out).not.toContain(apiSecret);
      const listed = JSON.parse((await cli('workspace', 'list', '--json')).out) as {
        workspaces: { id: string }[];
      };
      expect(listed.workspaces.map((w) => w.id)).toEqual([beta.id, id]);

      // the service, started on the same database, accepts the pair the CLI printed
      const app = isIntegration()
        ? await startTestApp(
            { SERVICE_ENCRYPTION_KEY: env.SERVICE_ENCRYPTION_KEY! },
            { databaseUrl: env.DATABASE_URL!, redisPrefix: `cli${randomBytes(3).toString('hex')}:` },
          )
        : await startTestApp({ SERVICE_DATA_DIR: env.SERVICE_DATA_DIR! });
      try {
        const ws = await new Client(app, `Bearer ${apiKey}:${apiSecret}`).get('/v1/workspace');
        expect(ws.status).toBe(200);
        expect(ws.body).toMatchObject({ id, name: 'Acme', api_key: apiKey });
      } finally {
        await app.close();
      }

      const del = await cli('workspace', 'delete', beta.id);
      expect(del.code).toBe(0);
      expect(del.out).toContain(beta.id);
      const again = await cli('workspace', 'delete', beta.id);
      expect(again.code).toBe(1);
      expect(again.err).toContain('not found');
      expect((await cli('workspace', 'delete', 'not-a-uuid')).code).toBe(1);
      expect((await cli('workspace', 'list')).out).not.toContain('Beta Corp');
    },
    SLOW_MS,
  );

  it.each([
    [[]],
    [['workspace']],
    [['workspace', 'rename']],
    [['workspace', 'create']],
    [['workspace', 'create', '--name']],
    [['workspace', 'create', '--name', 'x', '--plan', 'pro']],
    [['workspace', 'delete']],
    [['frobnicate']],
  ])('refuses %j with usage and exit code 2', async (argv) => {
    const res = await cli(...argv);
    expect(res.code).toBe(2);
    expect(res.err + res.out).toContain('Usage: chat-service');
  });

  it('help prints the usage', async () => {
    const res = await cli('help');
    expect(res.code).toBe(0);
    expect(res.out).toBe(USAGE);
  });

  it('a bad configuration stops it with exit code 78 naming the variable', async () => {
    let err = '';
    const code = await runCli(
      ['migrate'],
      { out: () => undefined, err: (s) => (err += s) },
      { DATABASE_URL: 'postgresql://localhost/x' },
    );
    expect(code).toBe(78);
    expect(err).toContain('SERVICE_ENCRYPTION_KEY');
  });

  const built = existsSync(join(__dirname, '..', '..', 'dist', 'cli.js'));
  (built ? it : it.skip)('runs as a compiled binary (dist/cli.js)', () => {
    const res = spawnSync(process.execPath, [join(__dirname, '..', '..', 'dist', 'cli.js'), 'help'], {
      encoding: 'utf8',
    });
    expect(res.status).toBe(0);
    expect(res.stdout).toContain('workspace create --name');
  });
});
