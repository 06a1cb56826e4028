import { randomBytes } from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';

export interface ReceivedRequest {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;

  json: any;
  at: number;
  /** Set once the answer is written (answers can be delayed). */
  answeredAt?: number;
  /** The status it was (or will be) answered with. */
  status?: number;
}

export interface Answer {
  status: number;
  body?: string;
  /** Hold the answer this long (ms). */
  delayMs?: number;
  /** Hold the answer until this settles (a test that must act while the request is in flight). */
  until?: Promise<unknown>;
}

type Responder = (req: ReceivedRequest) => Answer | number;

/**
 * A real webhook receiver on 127.0.0.1 (random port): records every request with its raw bytes and
 * answers per path with a programmable status.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly responders = new Map<string, Responder>();
  private readonly waiters = new Set<() => void>();
  private readonly server = http.createServer((req, res) => this.handle(req, res));
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  /** A fresh path answering `respond` (a status or a function). */
  url(respond: Responder | number = 200, name = 'hook'): string {
    const path = `/${name}/${randomBytes(6).toString('hex')}`;
    this.respond(path, respond);
    return `http://127.0.0.1:${this.port}${path}`;
  }

  respond(pathOrUrl: string, respond: Responder | number): void {
    this.responders.set(pathOf(pathOrUrl), typeof respond === 'number' ? () => respond : respond);
  }

  received(pathOrUrl?: string, pred: (r: ReceivedRequest) => boolean = () => true): ReceivedRequest[] {
    const path = pathOrUrl ? pathOf(pathOrUrl) : null;
    return this.requests.filter((r) => (!path || r.path === path) && pred(r));
  }

  /** Waits until `count` matching requests have arrived. */
  async waitFor(
    pathOrUrl: string,
    opts: { count?: number; timeoutMs?: number; pred?: (r: ReceivedRequest) => boolean } = {},
  ): Promise<ReceivedRequest[]> {
    const { count = 1, timeoutMs = 15_000, pred } = opts;
    const matches = () => this.received(pathOrUrl, pred);
    if (matches().length >= count) return matches();
    return new Promise((resolve, reject) => {
      const waiter = () => {
        if (matches().length >= count) {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(matches());
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `receiver: expected ${count} request(s) on ${pathOf(pathOrUrl)} within ${timeoutMs} ms, got ${matches().length}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      const entry: ReceivedRequest = {
        path: (req.url ?? '').split('?')[0]!,
        method: req.method ?? '',
        headers: req.headers,
        raw,
        json,
        at: Date.now(),
      };
      const responder = this.responders.get(entry.path);
      const a = responder ? responder(entry) : 200;
      const answer: Answer = typeof a === 'number' ? { status: a } : a;
      entry.status = answer.status;
      const send = () => {
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '', () => (entry.answeredAt = Date.now()));
      };
      this.requests.push(entry);
      for (const w of [...this.waiters]) w();
      if (answer.until) {
        void answer.until.then(send, send);
      } else if (answer.delayMs) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          send();
        }, answer.delayMs);
        this.timers.add(timer);
      } else send();
    });
  }
}

function pathOf(pathOrUrl: string): string {
  return pathOrUrl.startsWith('http') ? new URL(pathOrUrl).pathname : pathOrUrl;
}
