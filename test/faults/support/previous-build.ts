import { execFileSync } from 'child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

const ROOT = join(__dirname, '..', '..', '..');

export interface PreviousBuild {
  /** What was built: the tag, or the commit. */
  ref: string;
  /** Its dist/main.js. */
  main: string;
  remove: () => void;
}

const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * The release before this build, built beside it: PREVIOUS_REF when set, else the newest `v*` tag that
 * is an ancestor of HEAD's first parent, else that parent (on main, the state before this change).
 * Checked out into a temporary worktree and built there with `nest build`, on this checkout's
 * node_modules when its package-lock.json is the same, else on its own `npm ci`.
 */
export function previousBuild(): PreviousBuild {
  let ref = process.env.PREVIOUS_REF ?? '';
  if (!ref) {
    try {
      ref = git('describe', '--tags', '--abbrev=0', '--match', 'v*', 'HEAD^');
    } catch {
      ref = git('rev-parse', '--short', 'HEAD^');
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'chat-previous-'));
  const tree = join(dir, 'tree');
  const remove = () => {
    try {
      git('worktree', 'remove', '--force', tree);
    } catch {
      /* not added */
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    git('worktree', 'add', '--detach', tree, ref);
    const sameLock =
      readFileSync(join(tree, 'package-lock.json'), 'utf8') ===
      readFileSync(join(ROOT, 'package-lock.json'), 'utf8');
    if (sameLock) symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: tree, stdio: 'ignore' });
    execFileSync(join(tree, 'node_modules', '.bin', 'nest'), ['build'], { cwd: tree, stdio: 'ignore' });
    const main = join(tree, 'dist', 'main.js');
    if (!existsSync(main)) throw new Error(`the build of ${ref} has no dist/main.js`);
    return { ref, main, remove };
  } catch (e) {
    remove();
    throw e;
  }
}
