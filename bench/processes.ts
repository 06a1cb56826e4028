import type { ChildProcess } from 'child_process';

/**
 * The child processes and clean-up steps of a benchmark script: every child is stopped and every step
 * run (last added first) at the end, on SIGINT/SIGTERM, and children are killed if the script exits.
 */
export function processGroup(log: (s: string) => void) {
  const children = new Set<ChildProcess>();
  const cleanups: (() => Promise<void>)[] = [];

  function track(child: ChildProcess): ChildProcess {
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  }

  async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  }

  let cleaning: Promise<void> | null = null;
  function cleanup(): Promise<void> {
    cleaning ??= (async () => {
      await Promise.all([...children].map((c) => stopChild(c, 5_000)));
      for (const f of cleanups.reverse()) await f().catch((e: unknown) => log(`cleanup: ${String(e)}`));
    })();
    return cleaning;
  }

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      log(`${sig}: cleaning up`);
      void cleanup().then(() => process.exit(130));
    });
  }
  process.once('exit', () => {
    for (const c of children) c.kill('SIGKILL');
  });

  return { track, stopChild, cleanup, cleanups };
}
