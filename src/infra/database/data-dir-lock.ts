import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'fs';
import { hostname } from 'os';
import { join, resolve } from 'path';

// An OS lock on an open file (Linux: an open-file-description lock, macOS: flock, Windows: LockFileEx):
// the kernel drops it when the process exits in any way, SIGKILL included, so no stale lock can outlive
// its holder. A lock *file* whose presence is the lock (proper-lockfile, O_EXCL) cannot tell a crashed
// holder from a live one without timing guesses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { tryLock } = require('fs-native-extensions') as { tryLock: (fd: number) => boolean };

export const LOCK_FILE = 'chat-service.lock';

/** Who holds the lock, as the holder wrote it into the lock file. */
interface Holder {
  pid: number;
  host: string;
  role: string;
  since: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: Holder | null,
  ) {
    const who = holder
      ? `PID ${holder.pid}${holder.host === hostname() ? '' : ` on host ${holder.host}`} (${holder.role}, since ${holder.since})`
      : 'a process that has not yet written its PID';
    super(
      `The data directory ${dir} is in use by another chat-service process: ${who}. ` +
        'The embedded database belongs to one process at a time: stop that process first ' +
        '(or, while the server runs, use its admin API instead of the CLI), or set DATABASE_URL to share PostgreSQL.',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly file: string;
  release: () => void;
}

/**
 * Takes the embedded data directory for this process, or fails at once with DataDirLockedError naming
 * the directory and the holder's PID. `role` says what holds it (server, cli) in that message.
 */
export async function lockDataDir(dataDir: string, role: string): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  const fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o644);
  let locked: boolean;
  try {
    locked = tryLock(fd);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (!locked) {
    closeSync(fd);
    throw new DataDirLockedError(dir, await readHolder(file));
  }
  // the file is never removed (a removal would race with a process opening it), only rewritten
  const holder: Holder = { pid: process.pid, host: hostname(), role, since: new Date().toISOString() };
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify(holder)}\n`, 0);
  let released = false;
  return {
    file,
    release: () => {
      if (released) return;
      released = true;
      try {
        ftruncateSync(fd, 0);
      } finally {
        closeSync(fd); // closing the only descriptor releases the lock
      }
    },
  };
}

/**
 * Fails with DataDirLockedError if another process holds `dataDir` right now; takes nothing. The server
 * looks before it starts so that a busy directory is one clear line, not a stack trace from inside Nest's
 * start-up (openDatabase still takes the lock: that is the guard).
 */
export async function assertDataDirFree(dataDir: string): Promise<void> {
  const dir = resolve(dataDir);
  const file = join(dir, LOCK_FILE);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDWR);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  let free: boolean;
  try {
    free = tryLock(fd);
  } finally {
    closeSync(fd);
  }
  if (!free) throw new DataDirLockedError(dir, await readHolder(file));
}

/** The holder may have locked the file a moment ago and not written it yet: look a few times. */
async function readHolder(file: string): Promise<Holder | null> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Holder>;
      if (typeof parsed.pid === 'number') {
        return {
          pid: parsed.pid,
          host: String(parsed.host),
          role: String(parsed.role),
          since: String(parsed.since),
        };
      }
    } catch {
      // empty or half-written: try again
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}
