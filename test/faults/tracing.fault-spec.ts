/**
 * OpenTelemetry tracing (issue 30, docs/OBSERVABILITY.md), on the built service as production runs it
 * (`node dist/main.js`: the instrumentations patch modules as they load, which they cannot do inside
 * jest's module registry). A tiny OTLP/HTTP endpoint (test/support/receiver.ts, JSON protocol) receives
 * the spans; a webhook receiver and a socket see what users see. The span tree of one send: the request
 * (server span) through its statement, the Socket.IO emit and the webhook delivery (whose POST carries
 * the W3C traceparent of its span), and the log's followers in traces of their own that link to it by
 * the event id. Off (no OTEL_* variables), the SDK is not loaded and webhooks carry no traceparent.
 */
import { spawnSync } from 'child_process';
import { join } from 'path';
import { Receiver } from '../support/receiver';
import { closeAllSockets, connectSocket } from '../support/socket';
import { call, ChatRoom, chatRoom, send } from './support/chat';
import { CLIENT, ExportedSpan, exportedSpans, SERVER, Trace, TRACES_PATH } from './support/otlp';
import { OwnStack, poll, ServiceProcess, sleep } from './support/processes';

jest.setTimeout(300_000);

/** A send within this long of its channel's membership change is left to the log's publisher (ROOM_MOVE_GRACE_MS). */
const ROOM_MOVE_GRACE_MS = 3_000;

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const statementOf = (s: ExportedSpan) => text(s.attributes['db.query.text'] ?? s.attributes['db.statement']);

describe('tracing: the span tree of one send', () => {
  const stack = new OwnStack();
  const adminToken = stack.adminToken;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    rx.respond(TRACES_PATH, () => ({ status: 200, body: '{}' }));
    await stack.start({ SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  }, 300_000);
  afterAll(async () => {
    closeAllSockets();
    await stack.stop();
    await rx?.close();
  });

  const start = (name: string, env: Record<string, string>) => stack.service(name, env);

  /** A room with a webhook for message.created and a socket of its second member. */
  async function room(via: ServiceProcess, name: string) {
    const r: ChatRoom = await chatRoom({ adminToken }, via, ['ana', 'bo']);
    const hookUrl = rx.url(200, name);
    const hook = await call(via, 'POST', '/v1/webhooks', r.workspace.auth, {
      url: hookUrl,
      events: ['message.created'],
    });
    expect(hook.status).toBe(201);
    const socket = await connectSocket(via.baseUrl, r.users[1]!.token);
    return { r, hookUrl, socket };
  }

  /** Sends as ana; waits for the message on bo's socket and for its webhook; answers its event id and the webhook's request. */
  async function sendAndDeliver(
    via: ServiceProcess,
    setup: Awaited<ReturnType<typeof room>>,
    content: string,
  ) {
    const sent = await send(via, setup.r, setup.r.users[0]!, content);
    expect(sent.status).toBe(201);
    const id = sent.body.id as string;
    await setup.socket.waitFor('message.new', (p) => p.data.id === id, 15_000);
    const [hook] = await rx.waitFor(setup.hookUrl, {
      pred: (q) => q.json?.data?.message?.id === id,
      timeoutMs: 30_000,
    });
    return { id, eventId: hook!.json.event_id as string, hook: hook! };
  }

  it('follows a send from the request through its statement, emit and webhook delivery; followers link to it', async () => {
    const svc = await start('traced', {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${rx.port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'chat-traced',
    });
    const setup = await room(svc, 'traced');
    try {
      // at once after the channel's members changed (a member added now, however long the setup took):
      // the log's publisher sends it, not the request
      const dee = await call(svc, 'PUT', '/v1/users/dee', setup.r.workspace.auth, { name: 'dee' });
      expect([200, 201]).toContain(dee.status);
      const added = await call(
        svc,
        'POST',
        `/v1/channels/${setup.r.channelId}/members`,
        setup.r.workspace.auth,
        {
          member_external_ids: ['dee'],
        },
      );
      expect(added.status).toBe(200);
      const early = await sendAndDeliver(svc, setup, 'one, within the grace');
      await sleep(ROOM_MOVE_GRACE_MS + 500);
      // later: the instance that committed it publishes it live, within the request
      const live = await sendAndDeliver(svc, setup, 'two, published live');

      const sendServer = (s: ExportedSpan) =>
        s.kind === SERVER && /\/v1\/channels\/:[a-z_]+\/messages$/.test(text(s.attributes['http.route']));
      const emitOf = (eventId: string) => (s: ExportedSpan) =>
        s.name === 'chat.emit' && s.attributes['chat.event.id'] === eventId;
      const deliveryOf = (eventId: string) => (s: ExportedSpan) =>
        s.name === 'chat.webhook deliver' && s.attributes['chat.event.id'] === eventId;
      const relayOf = (eventId: string) => (s: ExportedSpan) =>
        s.name === 'chat.webhooks relay' && s.links.some((l) => l.attributes['chat.event.id'] === eventId);
      // wait until each of these has arrived (a failure names the ones missing)
      const expected: [string, (s: ExportedSpan) => boolean][] = [
        ['emit of send one', emitOf(early.eventId)],
        ['emit of send two', emitOf(live.eventId)],
        ['delivery of send one', deliveryOf(early.eventId)],
        ['delivery of send two', deliveryOf(live.eventId)],
        ['relay linked to send one', relayOf(early.eventId)],
        ['relay linked to send two', relayOf(live.eventId)],
      ];
      let all: ExportedSpan[] = [];
      const missing = () => expected.filter(([, p]) => !all.some(p)).map(([name]) => name);
      await poll(
        'the spans of both sends',
        async () => {
          all = exportedSpans(rx);
          if (all.filter(sendServer).length < 2 || missing().length)
            throw new Error(
              `missing: ${[...missing(), ...(all.filter(sendServer).length < 2 ? ['two server spans'] : [])].join(', ')}`,
            );
          return true;
        },
        30_000,
        100,
      );
      expect(new Set(all.map((s) => s.service))).toEqual(new Set(['chat-traced']));

      /** The request's trace of a send: its emit or its delivery belongs to it; the root is the POST's server span. */
      const requestTrace = (span: ExportedSpan) => {
        const t = Trace.of(all, span.traceId);
        const server = t.spans.find((s) => sendServer(s) && s.parentSpanId === null);
        expect(server).toBeDefined();
        return { t, server: server! };
      };

      // -- the live send: one trace from the request to the receiver of its webhook
      const liveEmit = all.find(emitOf(live.eventId))!;
      const { t, server } = requestTrace(liveEmit);
      const outline = t.outline();
      // the statement that stores it (and commits: it is its own transaction), under the request
      const statement = t.spans.find((s) => /chat_send_messages?\(/.test(statementOf(s)));
      expect({ statement: !!statement, outline }).toEqual({ statement: true, outline });
      expect(t.root(statement!)).toBe(server);
      // no span per middleware and none per pool checkout: the spans a request makes are the ones above
      expect(
        t.spans
          .map((s) => s.name)
          .filter((n) => /^(middleware|router|request handler) - |^pg(-pool)?\.connect$/.test(n)),
      ).toEqual([]);
      // the log followers' pass that the commit asked for is not the request's (it runs in no trace)
      expect(t.spans.map(statementOf).filter((q) => q.includes('/* log-follower */'))).toEqual([]);
      // the Socket.IO emit of its message.created, under the request, and the adapter's publish to Redis under it
      expect(t.root(liveEmit)).toBe(server);
      expect(liveEmit.attributes['chat.channel.id']).toBe(setup.r.channelId);
      expect(t.children(liveEmit).some((c) => /publish/i.test(c.name))).toBe(true);
      // the webhook delivery continues the request's trace; its POST's span is what the receiver was told
      const delivery = all.find(deliveryOf(live.eventId))!;
      expect(delivery.traceId).toBe(t.traceId);
      expect(t.root(delivery)).toBe(server);
      const post = t.children(delivery).find((c) => c.kind === CLIENT && /^POST\b/.test(c.name));
      expect(post).toBeDefined();
      expect(live.hook.headers.traceparent).toBe(`00-${t.traceId}-${post!.spanId}-01`);
      // the webhook relay (a log follower) runs in a trace of its own, linked to the span that wrote the event
      const relay = all.find(relayOf(live.eventId))!;
      expect(relay.traceId).not.toBe(t.traceId);
      const link = relay.links.find((l) => l.attributes['chat.event.id'] === live.eventId)!;
      expect(link.traceId).toBe(t.traceId);
      expect(t.byId.get(link.spanId)).toBeDefined();
      expect(t.root(t.byId.get(link.spanId)!)).toBe(server);

      // -- the send the log's publisher sent: its emit is under the publisher's span, which links to the request
      const earlyEmit = all.find(emitOf(early.eventId))!;
      const pt = Trace.of(all, earlyEmit.traceId);
      const publish = pt.root(earlyEmit);
      expect(publish.name).toBe('chat.publish');
      expect(publish.parentSpanId).toBeNull();
      const writer = publish.links.find((l) => l.attributes['chat.event.id'] === early.eventId);
      expect(writer).toBeDefined();
      const et = Trace.of(all, writer!.traceId);
      const earlyServer = requestTrace(et.spans[0]!).server;
      expect(et.root(et.byId.get(writer!.spanId)!)).toBe(earlyServer);
      expect(et.spans.some((s) => /chat_send_messages?\(/.test(statementOf(s)))).toBe(true);
      // and its webhook delivery is in the request's trace too
      expect(all.find(deliveryOf(early.eventId))!.traceId).toBe(et.traceId);
    } finally {
      // the next test's webhooks must not be delivered by this instance
      await svc.stop();
    }
  });

  it('off: no OTEL_* variables, no SDK loaded, no span exported and no traceparent on webhooks', async () => {
    const before = rx.received(TRACES_PATH).length;
    const svc = await start('untraced', {});
    const setup = await room(svc, 'untraced');
    const { hook } = await sendAndDeliver(svc, setup, 'not traced');
    // the webhook arrived (the control): it carries no trace, and nothing was exported meanwhile
    expect(hook.headers.traceparent).toBeUndefined();
    expect(rx.received(TRACES_PATH).length).toBe(before);
    await svc.stop();
    expect(rx.received(TRACES_PATH).length).toBe(before);

    // the entry's first import loads the SDK only when asked for
    const loaded = (env: Record<string, string>) => {
      const r = spawnSync(
        process.execPath,
        [
          '-r',
          join(__dirname, '../../dist/ops/tracing/preload.js'),
          '-e',
          `process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('@opentelemetry/sdk-node'))))`,
        ],
        { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' },
      );
      return r.stdout;
    };
    expect(loaded({})).toBe('false');
    expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toBe('true');
    expect(loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' })).toBe(
      'false',
    );
  });
});
