/**
 * An abusive client, run as a process of its own (so its busy loop does not slow the test's own
 * measurements): `node -r ts-node/register/transpile-only flooder.ts <base url> <token> <channel id>
 * <sockets> <duration ms>`. Each socket emits `message.send`, `channel.read` and `typing.start` as fast
 * as it can, in bursts of thousands; a socket the server closes is opened again. Prints one JSON line
 * with what it sent and how it was answered.
 */
import { io, Socket } from 'socket.io-client';

const [baseUrl, token, channelId, socketsArg, durationArg] = process.argv.slice(2);
if (!baseUrl || !token || !channelId) {
  process.stderr.write('usage: flooder.ts <base url> <token> <channel id> <sockets> <duration ms>\n');
  process.exit(2);
}
const BURST = 500;
const EVENTS = ['message.send', 'channel.read', 'typing.start'] as const;

const report = {
  emitted: 0,
  acks: {} as Record<string, number>,
  connects: 0,
  disconnects: {} as Record<string, number>,
  connectErrors: {} as Record<string, number>,
};
const count = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
let stopping = false;

function open(): Promise<Socket | null> {
  return new Promise((resolve) => {
    const s = io(baseUrl, {
      transports: ['websocket'],
      auth: { token },
      reconnection: false,
      forceNew: true,
    });
    s.once('connect', () => {
      report.connects++;
      resolve(s);
    });
    s.once('connect_error', (e: Error & { data?: { error?: { code?: string } } }) => {
      count(report.connectErrors, e.data?.error?.code ?? e.message);
      s.close();
      resolve(null);
    });
  });
}

async function flood(): Promise<void> {
  while (!stopping) {
    const s = await open();
    if (!s) {
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const closed = new Promise<void>((resolve) =>
      s.once('disconnect', (reason) => {
        count(report.disconnects, reason);
        resolve();
      }),
    );
    let open_ = true;
    void closed.then(() => (open_ = false));
    while (open_ && !stopping) {
      for (let i = 0; i < BURST && open_; i++) {
        for (const name of EVENTS) {
          const payload =
            name === 'message.send'
              ? { channel_id: channelId, content: `flood ${report.emitted}` }
              : { channel_id: channelId };
          s.emit(name, payload, (ack: { ok: boolean; error?: { code: string } }) =>
            count(report.acks, ack.ok ? `${name} ok` : `${name} ${ack.error?.code}`),
          );
          report.emitted++;
        }
      }
      await new Promise((r) => setTimeout(r, 20)); // let the frames go out
    }
    s.close();
  }
}

const sockets = Number(socketsArg);
const floods = Array.from({ length: sockets }, () => flood());
setTimeout(() => {
  stopping = true;
  void Promise.all(floods).then(() => {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.exit(0);
  });
}, Number(durationArg));
