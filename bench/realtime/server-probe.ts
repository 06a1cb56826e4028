/**
 * Preloaded into chat-service (`node --expose-gc -r server-probe.js dist/main.js`) by bench/realtime.ts:
 * on {cmd: 'mem'} over IPC it collects garbage so the next /metrics reading is settled, and answers with
 * process.memoryUsage(); when the parent goes away it shuts the service down.
 */
import { writeFileSync } from 'fs';
import { Session } from 'inspector';
import type { FromServer, ToServer } from './protocol';

let profiler: Session | undefined;

/** Starts the CPU profiler (no file), or stops it and writes the .cpuprofile. */
function profile(m: { id: number; file?: string }): void {
  const done = () => process.send?.({ type: 'profile', id: m.id } satisfies FromServer);
  if (!m.file) {
    profiler = new Session();
    profiler.connect();
    profiler.post('Profiler.enable', () => profiler?.post('Profiler.start', done));
    return;
  }
  const file = m.file;
  profiler?.post('Profiler.stop', (err, result) => {
    if (!err) writeFileSync(file, JSON.stringify(result.profile));
    profiler?.disconnect();
    profiler = undefined;
    done();
  });
}

if (process.send) {
  process.on('message', (m: ToServer) => {
    if (m?.cmd === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ type: 'cpu', id: m.id, micros: u.user + u.system } satisfies FromServer);
      return;
    }
    if (m?.cmd === 'profile') return profile(m);
    if (m?.cmd !== 'mem') return;
    const g = (globalThis as { gc?: () => void }).gc;
    g?.();
    setTimeout(() => {
      g?.();
      const { rss, heapUsed } = process.memoryUsage();
      process.send?.({ type: 'mem', id: m.id, rss, heapUsed, sockets: -1 } satisfies FromServer);
    }, 300);
  });
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.channel?.unref();
}
