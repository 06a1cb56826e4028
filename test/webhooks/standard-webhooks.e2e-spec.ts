import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { readFileSync } from 'fs';
import type { IncomingHttpHeaders } from 'http';
import { freePort } from '../support/ports';
import { join } from 'path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { SecretBox } from '../../src/common/crypto';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';
import { ReceivedRequest, Receiver } from '../support/receiver';
import { createWebhook, expectedSignature, forUser, provision, waitDeliveries } from './helpers';

/** The README's receiver ("Receiving webhooks (Node.js)"), exactly as documented. */
function readmeReceiverCode(): string {
  const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Receiving webhooks (Node.js)'));
  const block = /```js\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no js block under "Receiving webhooks (Node.js)"');
  return block[1]!;
}

/** Runs the README's receiver in its own node process with `secret`; stopped by `close` (its own pid). */
class ReadmeReceiver {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(secret: string, port?: number): Promise<ReadmeReceiver> {
    const p = port ?? (await freePort());
    const child = spawn(process.execPath, ['-e', readmeReceiverCode()], {
      env: { PATH: process.env.PATH, CHAT_WEBHOOK_SECRET: secret, PORT: String(p) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const r = new ReadmeReceiver(child, `http://127.0.0.1:${p}/chat-hooks`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await fetch(r.url, { method: 'POST' }); // any answer means it listens (this one is a 400)
        return r;
      } catch (err) {
        if (child.exitCode !== null || Date.now() > deadline) {
          r.close();
          throw new Error(`the README receiver did not start: ${String(err)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** Posts a received delivery again, byte for byte with its headers; answers the status. */
  async replay(req: ReceivedRequest, change: { body?: Buffer; timestamp?: string } = {}): Promise<number> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string' && (k.startsWith('x-service-') || k.startsWith('webhook-'))) headers[k] = v;
    }
    if (change.timestamp) headers['x-service-timestamp'] = change.timestamp;
    const res = await fetch(this.url, { method: 'POST', headers, body: change.body ?? req.raw });
    await res.arrayBuffer();
    return res.status;
  }

  close(): void {
    if (this.child.exitCode === null && this.child.pid) process.kill(this.child.pid);
  }
}

const flat = (h: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => typeof e[1] === 'string'));

describe('Standard Webhooks headers beside the X-Service ones', () => {
  let t: TestApp;
  let rx: Receiver;
  const readmeReceivers: ReadmeReceiver[] = [];
  const readmeReceiver = async (secret: string, port?: number) => {
    const r = await ReadmeReceiver.start(secret, port);
    readmeReceivers.push(r);
    return r;
  };

  beforeAll(async () => {
    rx = await Receiver.start();
    t = await startTestApp({
      SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.2,0.2,0.2',
      SERVICE_WEBHOOK_RETRY_JITTER: '0',
    });
  }, 300_000); // booting on a loaded 2-core machine can take minutes
  afterAll(async () => {
    for (const r of readmeReceivers) r.close();
    await t?.close();
    await rx?.close();
  });

  it('a delivery verifies with the README snippet and with standardwebhooks, the X-Service headers as before', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created']);
    const secret = wh.signing_secret!;
    await provision(ws, 'zoe');
    const [req] = await rx.waitFor(url, { pred: forUser('zoe') });
    const h = req!.headers;

    // SPEC.md's headers, unchanged: the whole whsec_ string is the HMAC key
    const ts = h['x-service-timestamp'] as string;
    expect(h['x-service-signature']).toBe(expectedSignature(secret, ts, req!.raw));
    expect(h['x-service-event-id']).toBe(req!.json.event_id);

    expect(h['webhook-id']).toBe(req!.json.event_id);
    expect(h['webhook-timestamp']).toBe(ts);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(req!.raw, flat(h))).toEqual(req!.json);
    expect(() => new Webhook(secret).verify(Buffer.concat([req!.raw, Buffer.from(' ')]), flat(h))).toThrow(
      WebhookVerificationError,
    );

    const readme = await readmeReceiver(secret);
    expect(await readme.replay(req!)).toBe(204);
    expect(await readme.replay(req!, { body: Buffer.concat([req!.raw, Buffer.from(' ')]) })).toBe(401);
    expect(await readme.replay(req!, { timestamp: String(Number(ts) - 301) })).toBe(400);
  });

  it('the README snippet, as the endpoint itself, accepts a real delivery', async () => {
    const ws = await newWorkspace(t);
    const port = await freePort();
    const wh = await createWebhook(ws, `http://127.0.0.1:${port}/chat-hooks`, ['user.created']);
    await readmeReceiver(wh.signing_secret!, port);
    await provision(ws, 'ana');
    const [d] = await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'succeeded', 'succeeded', 30_000);
    expect(d).toMatchObject({ attempts: 1, response_status: 204 });
  });

  it('every attempt of a delivery, retried and manually retried, keeps the webhook-id and is signed afresh', async () => {
    const ws = await newWorkspace(t);
    const answers = [503, 422, 200];
    const url = rx.url(() => answers.shift() ?? 200);
    const wh = await createWebhook(ws, url, ['user.created']);
    await provision(ws, 'ana');
    const [failed] = await waitDeliveries(
      ws,
      wh.id,
      (l) => l[0]?.status === 'failed',
      'failed after a retry',
    );
    expect(failed!.attempts).toBe(2);
    await ws.api.post(`/v1/webhooks/${wh.id}/deliveries/${failed!.id}/retry`).expect(202);
    await waitDeliveries(ws, wh.id, (l) => l[0]?.status === 'succeeded', 'succeeded after a manual retry');

    const reqs = rx.received(url);
    expect(reqs).toHaveLength(3);
    const wh3 = new Webhook(wh.signing_secret!);
    for (const r of reqs) {
      expect(r.headers['webhook-id']).toBe(failed!.event_id);
      expect(r.headers['webhook-timestamp']).toBe(r.headers['x-service-timestamp']);
      expect(wh3.verify(r.raw, flat(r.headers))).toEqual(r.json);
    }
    const readme = await readmeReceiver(wh.signing_secret!);
    expect(await readme.replay(reqs[2]!)).toBe(204);
  });

  it('a webhook signed with the api_secret verifies with the raw format, and with the README snippet', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    await createWebhook(ws, url, ['user.created'], { signing: 'api_secret' });
    await provision(ws, 'ana');
    const [req] = await rx.waitFor(url, { pred: forUser('ana') });
    expect(req!.headers['x-service-signature']).toBe(
      expectedSignature(ws.apiSecret, req!.headers['x-service-timestamp'] as string, req!.raw),
    );
    expect(new Webhook(ws.apiSecret, { format: 'raw' }).verify(req!.raw, flat(req!.headers))).toEqual(
      req!.json,
    );
    const readme = await readmeReceiver(ws.apiSecret);
    expect(await readme.replay(req!)).toBe(204);
  });

  it('after a rotation the new secret verifies and the old one does not', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created']);
    const rot = await ws.api.post(`/v1/webhooks/${wh.id}/rotate-secret`).expect(200);
    const secret = rot.body.signing_secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await provision(ws, 'ana');
    const [req] = await rx.waitFor(url, { pred: forUser('ana') });
    expect(new Webhook(secret).verify(req!.raw, flat(req!.headers))).toEqual(req!.json);
    expect(() => new Webhook(wh.signing_secret!).verify(req!.raw, flat(req!.headers))).toThrow(
      WebhookVerificationError,
    );
    expect(req!.headers['x-service-signature']).toBe(
      expectedSignature(secret, req!.headers['x-service-timestamp'] as string, req!.raw),
    );
  });

  it('a secret issued before (whsec_ + base64url) keeps its X-Service signature and verifies as stored with the raw format', async () => {
    const ws = await newWorkspace(t);
    const url = rx.url(200);
    const wh = await createWebhook(ws, url, ['user.created']);
    const legacy = `whsec_${randomBytes(32).toString('base64url')}`;
    const sealed = t.app.get(SecretBox).seal(legacy);
    expect(await t.app.get(WebhooksRepository).setSecret(ws.id, wh.id, sealed)).toBe(true);
    await provision(ws, 'ana');
    const [req] = await rx.waitFor(url, { pred: forUser('ana') });
    expect(req!.headers['x-service-signature']).toBe(
      expectedSignature(legacy, req!.headers['x-service-timestamp'] as string, req!.raw),
    );
    expect((req!.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(new Webhook(legacy, { format: 'raw' }).verify(req!.raw, flat(req!.headers))).toEqual(req!.json);
    const asStandard = `whsec_${Buffer.from(legacy.slice(6), 'base64url').toString('base64')}`;
    expect(new Webhook(asStandard).verify(req!.raw, flat(req!.headers))).toEqual(req!.json);
    const readme = await readmeReceiver(legacy);
    expect(await readme.replay(req!)).toBe(204);
  });
});
