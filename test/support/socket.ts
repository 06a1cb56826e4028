import { io, Socket } from 'socket.io-client';

export interface Received {
  name: string;
  payload: any;
  at: number;
}

/** A real socket.io-client that records every event and can wait for one. */
export class TestSocket {
  readonly events: Received[] = [];
  private waiters = new Set<(e: Received) => void>();

  constructor(readonly socket: Socket) {
    socket.onAny((name: string, payload: unknown) => {
      const e = { name, payload, at: Date.now() };
      this.events.push(e);
      for (const w of [...this.waiters]) w(e);
    });
  }

  waitFor(name: string, pred: (p: any) => boolean = () => true, timeoutMs = 5000): Promise<any> {
    const seen = this.events.find((e) => e.name === name && pred(e.payload));
    if (seen) return Promise.resolve(seen.payload);
    return new Promise((resolve, reject) => {
      const w = (e: Received) => {
        if (e.name === name && pred(e.payload)) {
          clearTimeout(timer);
          this.waiters.delete(w);
          resolve(e.payload);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(
          new Error(`no ${name} within ${timeoutMs} ms; got ${this.events.map((x) => x.name).join(', ')}`),
        );
      }, timeoutMs);
      this.waiters.add(w);
    });
  }

  /**
   * "Nothing arrived", judged the only way that can fail: `control` names an event sent after the one
   * that must not arrive, through the same path (a later commit in the log, a later emit), so it comes
   * after it; once the control has arrived, every event this socket ever received is looked at.
   */
  async expectNoneBefore(
    name: string,
    pred: (p: any) => boolean,
    control: [string, (p: any) => boolean],
    timeoutMs = 5000,
  ): Promise<void> {
    await this.waitFor(control[0], control[1], timeoutMs);
    const got = this.events.filter((e) => e.name === name && pred(e.payload));
    if (got.length) throw new Error(`unexpected ${name}: ${JSON.stringify(got[0]!.payload)}`);
  }

  emitAck(name: string, payload: unknown, timeoutMs = 5000): Promise<any> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ack for ${name}`)), timeoutMs);
      this.socket.emit(name, payload, (ack: unknown) => {
        clearTimeout(timer);
        resolve(ack);
      });
    });
  }

  close(): void {
    this.socket.close();
  }
}

const open: TestSocket[] = [];

/** A socket with a user's token (and more handshake `auth`, e.g. `{presence: 'batch'}`), closed by closeAllSockets. */
export function connectSocket(
  baseUrl: string,
  token: string | undefined,
  auth: Record<string, unknown> = {},
): Promise<TestSocket> {
  const socket = io(baseUrl, {
    transports: ['websocket'],
    auth: token === undefined ? auth : { ...auth, token },
    reconnection: false,
    forceNew: true,
  });
  const s = new TestSocket(socket);
  open.push(s);
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(s));
    socket.once('connect_error', (e) => reject(e));
  });
}

export function connectError(baseUrl: string, token: string | undefined): Promise<Error & { data?: any }> {
  const socket = io(baseUrl, {
    transports: ['websocket'],
    auth: token === undefined ? {} : { token },
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => {
      socket.close();
      reject(new Error('connected although it should not'));
    });
    socket.once('connect_error', (e) => {
      socket.close();
      resolve(e);
    });
  });
}

export function closeAllSockets(): void {
  for (const s of open.splice(0)) s.close();
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
