#!/usr/bin/env node
import 'reflect-metadata';
import { SecretBox } from './common/crypto';
import { AppError } from './common/errors/app-error';
import { isUuid } from './common/ids';
import { AppConfig, ConfigError, environment, loadConfig } from './config/config.schema';
import { DatabaseHandle, openDatabase, runMigrations } from './infra/database/data-source.factory';
import { loadEncryptionKey } from './infra/secrets/secrets.module';
import { WorkspacesRepository } from './workspaces/workspaces.repository';
import { WorkspacesService } from './workspaces/workspaces.service';

/**
 * The operator CLI (CONTRACT §4): `chat-service workspace create --name Acme`, `workspace list`,
 * `workspace delete <id>`, `migrate`. It opens the database the service would open (same
 * configuration, same encryption key) without starting HTTP. On the embedded database, stop the
 * server first: PGlite's data directory belongs to one process at a time.
 */

export const USAGE = `Usage: chat-service <command>

  workspace create --name <name> [--json]   create a workspace; prints its id, api_key and api_secret
  workspace list [--json]                   list workspaces, newest first
  workspace delete <id>                     delete a workspace and everything in it
  migrate                                   apply pending database migrations

Configuration comes from the environment, as for the service (DATABASE_URL, SERVICE_DATA_DIR,
SERVICE_ENCRYPTION_KEY, ...; see .env.example). On the embedded database, stop the server first.
`;

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const stdio: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

export const EXIT = { ok: 0, failed: 1, usage: 2, config: 78 } as const;

class UsageError extends Error {}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

/** `--name Acme`, `--name=Acme` and bare `--json`; everything else is positional. */
export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) {
      flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    } else if (arg === '--json' || arg === '--help') {
      flags.set(arg.slice(2), true);
    } else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      flags.set(arg.slice(2), value);
      i++;
    }
  }
  return { positional, flags };
}

function onlyFlags(p: Parsed, allowed: string[]): void {
  for (const k of p.flags.keys()) if (!allowed.includes(k)) throw new UsageError(`unknown option --${k}`);
}

async function withWorkspaces<T>(config: AppConfig, fn: (svc: WorkspacesService) => Promise<T>): Promise<T> {
  return withDatabase(config, async (handle) => {
    await runMigrations(handle);
    const box = new SecretBox(loadEncryptionKey(config));
    const service = new WorkspacesService(
      handle.dataSource,
      new WorkspacesRepository(handle.dataSource),
      box,
    );
    return fn(service);
  });
}

async function withDatabase<T>(config: AppConfig, fn: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const handle = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.SERVICE_DATA_DIR,
    poolSize: 2,
    holder: 'cli',
  });
  try {
    return await fn(handle);
  } finally {
    if (handle.dataSource.isInitialized) await handle.dataSource.destroy();
    await handle.closeEngine();
  }
}

async function workspaceCreate(config: AppConfig, p: Parsed, io: CliIo): Promise<number> {
  onlyFlags(p, ['name', 'json']);
  const name = p.flags.get('name');
  if (typeof name !== 'string' || !name.trim()) throw new UsageError('workspace create needs --name <name>');
  if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
  if (p.positional.length) throw new UsageError(`unexpected argument "${p.positional[0]}"`);
  const ws = await withWorkspaces(config, (svc) => svc.create(name));
  if (p.flags.get('json')) {
    io.out(`${JSON.stringify(ws)}\n`);
  } else {
    io.out(
      [
        `id:         ${ws.id}`,
        `name:       ${ws.name}`,
        `api_key:    ${ws.api_key}`,
        `api_secret: ${ws.api_secret}`,
        `created_at: ${ws.created_at}`,
        '',
        'The api_secret is shown only this once: store it now.',
        '',
      ].join('\n'),
    );
  }
  return EXIT.ok;
}

async function workspaceList(config: AppConfig, p: Parsed, io: CliIo): Promise<number> {
  onlyFlags(p, ['json']);
  if (p.positional.length) throw new UsageError(`unexpected argument "${p.positional[0]}"`);
  const all = await withWorkspaces(config, async (svc) => {
    const out: Awaited<ReturnType<WorkspacesService['list']>>['workspaces'] = [];
    let cursor: string | undefined;
    do {
      const page = await svc.list(100, cursor);
      out.push(...page.workspaces);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return out;
  });
  if (p.flags.get('json')) {
    io.out(`${JSON.stringify({ workspaces: all })}\n`);
    return EXIT.ok;
  }
  if (!all.length) {
    io.out('No workspaces.\n');
    return EXIT.ok;
  }
  const rows = [
    ['ID', 'NAME', 'API_KEY', 'CREATED_AT'],
    ...all.map((w) => [w.id, w.name, w.api_key ?? '-', w.created_at]),
  ];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  io.out(
    `${rows
      .map((r) =>
        r
          .map((cell, col) => cell.padEnd(widths[col]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n')}\n`,
  );
  return EXIT.ok;
}

async function workspaceDelete(config: AppConfig, p: Parsed, io: CliIo): Promise<number> {
  onlyFlags(p, []);
  const [id, extra] = p.positional;
  if (!id) throw new UsageError('workspace delete needs the workspace id');
  if (extra) throw new UsageError(`unexpected argument "${extra}"`);
  if (!isUuid(id)) {
    io.err(`workspace ${id} not found\n`);
    return EXIT.failed;
  }
  try {
    await withWorkspaces(config, (svc) => svc.delete(id));
  } catch (e) {
    if (e instanceof AppError && e.code === 'NOT_FOUND') {
      io.err(`workspace ${id} not found\n`);
      return EXIT.failed;
    }
    throw e;
  }
  io.out(`deleted workspace ${id}\n`);
  return EXIT.ok;
}

async function migrate(config: AppConfig, p: Parsed, io: CliIo): Promise<number> {
  onlyFlags(p, []);
  if (p.positional.length) throw new UsageError(`unexpected argument "${p.positional[0]}"`);
  const ran = await withDatabase(config, (handle) => runMigrations(handle));
  const functions = ran.functions.length ? `, function(s) ${ran.functions.join(', ')} (re)created` : '';
  io.out(
    `${ran.migrations} migration(s) applied${functions} (${config.embedded ? `embedded database in ${config.SERVICE_DATA_DIR}` : 'PostgreSQL'})\n`,
  );
  return EXIT.ok;
}

/** Runs one command; answers the exit code instead of exiting, so tests can call it. */
export async function runCli(
  argv: string[],
  io: CliIo = stdio,
  env: NodeJS.ProcessEnv = environment(),
): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (e) {
    io.err(`${(e as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const [group, command] = parsed.positional;
  if (!group || group === 'help' || parsed.flags.get('help')) {
    io.out(USAGE);
    return group || parsed.flags.get('help') ? EXIT.ok : EXIT.usage;
  }

  let config: AppConfig;
  try {
    config = loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.err(`${e.message}\n`);
      return EXIT.config;
    }
    throw e;
  }

  const rest: Parsed = {
    positional: parsed.positional.slice(group === 'workspace' ? 2 : 1),
    flags: parsed.flags,
  };
  try {
    if (group === 'migrate') return await migrate(config, rest, io);
    if (group === 'workspace') {
      switch (command ?? '') {
        case 'create':
          return await workspaceCreate(config, rest, io);
        case 'list':
          return await workspaceList(config, rest, io);
        case 'delete':
          return await workspaceDelete(config, rest, io);
        default:
          throw new UsageError(
            command ? `unknown workspace command "${command}"` : 'workspace needs a command',
          );
      }
    }
    throw new UsageError(`unknown command "${group}"`);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    io.err(`chat-service: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT.failed;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2))
    .then((code) => {
      process.exitCode = code;
    })
    .catch((e: unknown) => {
      process.stderr.write(`chat-service: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = EXIT.failed;
    });
}
