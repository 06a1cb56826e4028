/** IPC messages between bench/realtime.ts (the parent) and its child processes. */

export interface SocketTarget {
  url: string;
  token?: string;
  /** which server (0 or 1) the socket talks to */
  server: 0 | 1;
}

export type ToClients =
  | { cmd: 'connect'; targets: SocketTarget[]; concurrency: number; timeoutMs: number }
  | { cmd: 'quiet'; quietMs: number; maxMs: number }
  | { cmd: 'phase'; phase: number; messages: number }
  | { cmd: 'count' }
  | { cmd: 'report'; failed: number[] }
  | { cmd: 'close' };

export interface ConnectResult {
  type: 'connected';
  ok: number;
  failed: number;
  errors: string[];
  ms: number;
  perServer: [number, number];
  /** the clients process's CPU while connecting (ms) */
  cpuMs: number;
  /** events received while connecting, by name */
  byName: Record<string, number>;
}

export interface PhaseReport {
  type: 'report';
  phase: number;
  /** message.new events carrying this phase's tag */
  received: number;
  /** distinct (socket, message) pairs received */
  unique: number;
  duplicates: number;
  outOfOrder: number;
  /** events from an earlier phase that arrived during this one */
  stale: number;
  firstAt: number;
  lastAt: number;
  /** sparse latency histogram, 1 ms buckets, per server the receiving socket is on: [ms, count][] */
  hist: [[number, number][], [number, number][]];
  /** (socket, message) pairs never received, per server */
  missingPerServer: [number, number];
  /** sockets that disconnected since connecting */
  disconnects: number;
  /** bytes of the JSON payload of the first message.new seen */
  payloadBytes: number;
  /** the first message.new seen, as JSON (chat-service's envelope is what the floor then sends) */
  sample: string;
  /** envelope seq going backwards / jumping ahead on a socket (chat-service only) */
  seqBackwards: number;
  seqJumps: number;
  /** message numbers no socket received (first 5,000) */
  lostEverywhere: number[];
  /** events of earlier phases received after their report, by phase */
  lateByPhase: Record<number, number>;
  /** CPU time of the clients process since the phase began, ms */
  cpuMs: number;
}

export type FromClients =
  | ConnectResult
  | { type: 'quiet'; ms: number; events: number; byName: Record<string, number> }
  | { type: 'phase-ready'; phase: number }
  | { type: 'count'; unique: number }
  | PhaseReport
  | { type: 'closed' };

export type ToServer =
  | { cmd: 'mem'; id: number }
  | { cmd: 'cpu'; id: number }
  /** BENCH_PROFILE_DIR: start the CPU profiler, or stop it and write the profile to `file` */
  | { cmd: 'profile'; id: number; file?: string };
export type FromServer =
  | { type: 'ready'; port: number }
  | { type: 'mem'; id: number; rss: number; heapUsed: number; sockets: number }
  /** process.cpuUsage(), user + system, in microseconds */
  | { type: 'cpu'; id: number; micros: number }
  | { type: 'profile'; id: number };
