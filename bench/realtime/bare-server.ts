/**
 * The floor for bench/realtime.ts: a bare Socket.IO server with the Redis adapter and nothing else
 * (no auth, no rooms, no database). POST /emit {content} broadcasts `message.new` to every socket on
 * every instance: chat-service's envelope (ENVELOPE, one it sent in the same run) with this content and
 * the next seq, or {content} without one; memory readings over IPC. Env: PORT, REDIS_URL, ADAPTER_KEY,
 * ENVELOPE.
 */
import { createServer } from 'http';
import { createAdapter } from '@socket.io/redis-adapter';
import Redis from 'ioredis';
import { Server } from 'socket.io';
import type { FromServer, ToServer } from './protocol';

const port = Number(process.env.PORT);
const envelope = process.env.ENVELOPE
  ? (JSON.parse(process.env.ENVELOPE) as { seq?: number; data?: object })
  : null;
let seq = 0;
const http = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/emit') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      try {
        const { content } = JSON.parse(body) as { content: string };
        io.emit(
          'message.new',
          envelope ? { ...envelope, seq: ++seq, data: { ...envelope.data, content } } : { content },
        );
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      } catch {
        res.writeHead(400).end();
      }
    });
    return;
  }
  res.writeHead(404).end();
});
// the same engine options as src/realtime/realtime-io.adapter.ts
const io = new Server(http, {
  path: '/socket.io',
  cors: { origin: true, credentials: true },
  pingInterval: 20_000,
  pingTimeout: 20_000,
  maxHttpBufferSize: 256 * 1024,
});
const pub = new Redis(process.env.REDIS_URL!);
const sub = pub.duplicate();
io.adapter(createAdapter(pub, sub, { key: process.env.ADAPTER_KEY! }));

const send = (m: FromServer) => process.send?.(m);
process.on('message', (m: ToServer) => {
  if (m.cmd === 'cpu') {
    const u = process.cpuUsage();
    send({ type: 'cpu', id: m.id, micros: u.user + u.system });
    return;
  }
  if (m.cmd !== 'mem') return;
  const g = (globalThis as { gc?: () => void }).gc;
  g?.();
  setTimeout(() => {
    g?.();
    const { rss, heapUsed } = process.memoryUsage();
    send({ type: 'mem', id: m.id, rss, heapUsed, sockets: io.engine.clientsCount });
  }, 300);
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => {
  // no explicit Redis disconnect: the adapter may still have commands in flight, and exit closes the sockets
  void io.close();
  setTimeout(() => process.exit(0), 200).unref();
});
http.listen(port, '127.0.0.1', () => send({ type: 'ready', port }));
