/**
 * Preloaded into chat-service (`node --expose-gc -r server-probe.js dist/main.js`) by bench/realtime.ts:
 * on {cmd: 'mem'} over IPC it collects garbage so the next /metrics reading is settled, and answers with
 * process.memoryUsage(); when the parent goes away it shuts the service down.
 */
import type { FromServer, ToServer } from './protocol';

if (process.send) {
  process.on('message', (m: ToServer) => {
    if (m?.cmd === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ type: 'cpu', id: m.id, micros: u.user + u.system } satisfies FromServer);
      return;
    }
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
