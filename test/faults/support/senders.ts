/**
 * Message senders, run as a process of their own (so their loops do not slow the test's own
 * measurements): `node -r ts-node/register/transpile-only senders.ts '<plan JSON>'`. Each target is a
 * user's REST send into a channel through one instance. Either `concurrency` senders per target loop
 * as fast as they are answered (a flood; with `honourRetryAfter`, a refused sender waits as the typed
 * client does), or one send every 1000 / `perSecond` ms goes to the targets in turn (a steady app).
 * Prints one JSON line: every answer's status, latency and Retry-After.
 * Flood senders start at random within the first `rampMs` when it is given.
 */
import { Agent, request } from 'http';

export interface Target {
  baseUrl: string;
  auth: string;
  channelId: string;
}

export interface Plan {
  targets: Target[];
  durationMs: number;
  concurrency?: number;
  perSecond?: number;
  honourRetryAfter?: boolean;
  rampMs?: number;
  connectFirst?: boolean;
}

export interface Answer {
  status: number;
  ms: number;
  /** The Retry-After header (seconds), or null. */
  retryAfter: number | null;
  /** The error code of a refusal (status >= 400), or a transport failure's message (status 0). */
  code?: string;
  at: number;
}

const plan = JSON.parse(process.argv[2] ?? '{}') as Plan;
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
const answers: Answer[] = [];
let started = Date.now();
let until = started + plan.durationMs;
let n = 0;

function post(t: Target, body: string): Promise<{ status: number; retry: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${t.baseUrl}/v1/channels/${t.channelId}/messages`,
      {
        method: 'POST',
        agent,
        timeout: 30_000,
        headers: {
          authorization: t.auth,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retry: res.headers['retry-after'],
            text: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

async function sendOnce(t: Target): Promise<Answer> {
  const at = Date.now();
  try {
    const res = await post(t, JSON.stringify({ content: `load ${process.pid} ${n++}` }));
    const answer: Answer = {
      status: res.status,
      ms: Date.now() - at,
      retryAfter: res.retry === undefined ? null : Number(res.retry),
      at: at - started,
    };
    if (res.status >= 400) {
      try {
        answer.code =
          (JSON.parse(res.text) as { error?: { code?: string } }).error?.code ?? res.text.slice(0, 80);
      } catch {
        answer.code = res.text.slice(0, 80);
      }
    }
    return answer;
  } catch (e) {
    return {
      status: 0,
      ms: Date.now() - at,
      retryAfter: null,
      code: String(e).slice(0, 120),
      at: at - started,
    };
  }
}

async function flood(t: Target): Promise<void> {
  // clients start within the first `rampMs`, not all in the same millisecond
  if (plan.rampMs) await new Promise((r) => setTimeout(r, Math.random() * plan.rampMs!));
  while (Date.now() < until) {
    const a = await sendOnce(t);
    answers.push(a);
    if (a.status === 0) await new Promise((r) => setTimeout(r, 50));
    else if (plan.honourRetryAfter && a.retryAfter)
      // as the typed client waits: Retry-After, and up to half as much again at random
      await new Promise((r) =>
        setTimeout(r, Math.min(a.retryAfter! * 1000 * (1 + Math.random() / 2), until - Date.now())),
      );
  }
}

async function steady(perSecond: number): Promise<void> {
  const pending: Promise<void>[] = [];
  for (let i = 0; ; i++) {
    const due = started + (i * 1000) / perSecond;
    if (due >= until) break;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const t = plan.targets[i % plan.targets.length]!;
    pending.push(sendOnce(t).then((a) => void answers.push(a)));
  }
  await Promise.all(pending);
}

/** One GET /healthz per connection the flood will use: the clients are connected before it starts. */
async function connectAll(): Promise<void> {
  const base = plan.targets[0]!.baseUrl;
  const count = plan.targets.length * (plan.concurrency ?? 1);
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const req = request(`${base}/healthz`, { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          });
          req.on('error', () => resolve());
          req.end();
        }),
    ),
  );
}

async function main(): Promise<void> {
  if (plan.connectFirst) {
    await connectAll();
    started = Date.now();
    until = started + plan.durationMs;
  }
  if (plan.perSecond) await steady(plan.perSecond);
  else
    await Promise.all(
      plan.targets.flatMap((t) => Array.from({ length: plan.concurrency ?? 1 }, () => flood(t))),
    );
  process.stdout.write(`${JSON.stringify(answers)}\n`);
  agent.destroy();
}

void main();
