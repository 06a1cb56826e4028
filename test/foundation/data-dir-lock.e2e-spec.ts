import { ChildProcess, spawn } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { CliIo, runCli } from '../../src/cli';
import { DataDirLockedError, lockDataDir } from '../../src/infra/database/data-dir-lock';
import { openDatabase } from '../../src/infra/database/data-source.factory';
import { startTestApp } from '../support/app';
import { isIntegration } from '../support/databases';

/**
 * The embedded data directory belongs to one process: a second server or the CLI beside a running
 * server fails at once, naming the directory and the holder's PID, and a holder killed with SIGKILL
 * leaves nothing behind that blocks the next start. Real child processes on a real directory.
 */

const ROOT = resolve(__dirname, '..', '..');
/** Child processes run the TypeScript sources directly, as `npm test` has no build. */
const TS_NODE = ['-r', 'ts-node/register/transpile-only'];
const SLOW = 300_000; // child processes compile and boot PGlite: generous on a loaded machine

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

function start(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; exit: Promise<Exit>; output: () => string } {
  const child = spawn(process.execPath, [...TS_NODE, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exit = new Promise<Exit>((done) =>
    child.once('exit', (code, signal) => done({ code, signal, out, err })),
  );
  return { child, exit, output: () => out };
}

const run = (args: string[], env: Record<string, string>): Promise<Exit> => start(args, env).exit;

async function cli(
  env: Record<string, string>,
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (s) => (out += s), err: (s) => (err += s) };
  const code = await runCli(argv, io, env);
  return { code, out, err };
}

// only the embedded database has a data directory (test:integration runs every app on PostgreSQL)
(isIntegration() ? describe.skip : describe)('embedded data directory: one process at a time', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'chat-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second holder, naming the directory and the PID, until the first lets go', async () => {
    const first = await lockDataDir(dir, 'server');
    const second = await lockDataDir(dir, 'cli').catch((e: unknown) => e);
    expect(second).toBeInstanceOf(DataDirLockedError);
    expect((second as DataDirLockedError).holder).toMatchObject({ pid: process.pid, role: 'server' });
    expect((second as DataDirLockedError).message).toContain(`The data directory ${resolve(dir)} is in use`);
    expect((second as DataDirLockedError).message).toContain(`PID ${process.pid} (server, since `);
    first.release();
    (await lockDataDir(dir, 'cli')).release();
  });

  it(
    'turns the CLI and a second server away while a server runs; the CLI works again once it stops',
    async () => {
      const env = { SERVICE_DATA_DIR: dir };
      expect((await cli(env, 'workspace', 'create', '--name', 'Acme')).code).toBe(0);
      const server = await startTestApp(env);
      let closed = false;
      try {
        const busy = new RegExp(
          `data directory ${resolve(dir).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another chat-service process: PID ${process.pid} \\(server`,
        );

        const viaCli = await run(['src/cli.ts', 'workspace', 'create', '--name', 'Beside'], env);
        expect(viaCli.code).toBe(1);
        expect(viaCli.err).toMatch(busy);
        expect(viaCli.err).not.toMatch(/Aborted|\n\s+at /); // one clear line, no stack

        const second = await run(['src/main.ts'], { ...env, PORT: '0' });
        expect(second.code).toBe(1);
        expect(second.err).toMatch(busy);
        expect(second.err).not.toMatch(/Aborted|\n\s+at /);
        expect(second.out).not.toContain('listening');

        // nothing was written beside the server: it still sees exactly its one workspace
        await server.app.close();
        closed = true;
        const list = await cli(env, 'workspace', 'list', '--json');
        expect(list.code).toBe(0);
        expect(
          (JSON.parse(list.out) as { workspaces: { name: string }[] }).workspaces.map((w) => w.name),
        ).toEqual(['Acme']);
      } finally {
        if (!closed) await server.close();
      }
    },
    SLOW,
  );

  it(
    'a holder killed with SIGKILL leaves no lock behind',
    async () => {
      const holder = start(
        [
          '-e',
          `require('./src/infra/database/data-source.factory').openDatabase({ dataDir: process.env.SERVICE_DATA_DIR, holder: 'test holder' })
             .then(() => process.stdout.write('ready\\n'), (e) => { console.error(e); process.exit(1); });
           setInterval(() => {}, 60000);`,
        ],
        { SERVICE_DATA_DIR: dir },
      );
      try {
        await new Promise<void>((ready, failed) => {
          holder.child.stdout!.on('data', () => holder.output().includes('ready') && ready());
          void holder.exit.then((e) => failed(new Error(`holder exited early: ${e.code} ${e.err}`)));
        });

        const refused = await openDatabase({ dataDir: dir, holder: 'server' }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(DataDirLockedError);
        expect((refused as DataDirLockedError).holder).toMatchObject({
          pid: holder.child.pid,
          role: 'test holder',
        });
        expect((await cli({ SERVICE_DATA_DIR: dir }, 'migrate')).err).toContain(
          `PID ${holder.child.pid} (test holder`,
        );

        holder.child.kill('SIGKILL');
        expect((await holder.exit).signal).toBe('SIGKILL');
      } finally {
        holder.child.kill('SIGKILL');
      }

      // at once, no waiting for the lock to go stale: the next process opens, migrates and writes
      const created = await cli({ SERVICE_DATA_DIR: dir }, 'workspace', 'create', '--name', 'After');
      expect(created).toMatchObject({ code: 0, err: '' });
    },
    SLOW,
  );
});
