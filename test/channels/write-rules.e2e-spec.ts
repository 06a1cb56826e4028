import type { Response } from 'supertest';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import type { Client, TestUser, TestWorkspace } from '../support/fixtures';
import { newWorkspace } from '../support/fixtures';
import { group, Msg, send, sleep } from '../messages/helpers';

/**
 * Every channel rule over every kind of write it applies to, and the kinds it must leave alone
 * (docs/ARCHITECTURE.md names the one owner of each). Each case runs in a fresh group of ana (admin),
 * bo, cy and eve, with a message of bo's; dee belongs to none of them.
 */

/** Who makes the request: a user's JWT, the backend for a user (`user_external_id`), the backend as itself. */
type Actor = { api: Client; for?: string; label: string };

interface World {
  ws: TestWorkspace;
  ch: string;
  /** bo's message in the channel. */
  msg: Msg;
}

type Write = (w: World, a: Actor) => Promise<Response>;

const acting = (a: Actor) => (a.for !== undefined ? { user_external_id: a.for } : {});

/** One request per kind of write, to the route that kind has for the actor. */
const WRITES = {
  send: (w, a) => a.api.post(`/v1/channels/${w.ch}/messages`, { content: 'hello', ...acting(a) }),
  edit: (w, a) => a.api.patch(`/v1/messages/${w.msg.id}`, { content: 'edited' }),
  unsend: (w, a) => a.api.delete(`/v1/messages/${w.msg.id}`),
  react: (w, a) => a.api.post(`/v1/messages/${w.msg.id}/reactions`, { emoji: '👍', ...acting(a) }),
  unreact: (w, a) =>
    a.api.delete(`/v1/messages/${w.msg.id}/reactions/${encodeURIComponent('👍')}`, acting(a)),
  pin: (w, a) => a.api.post(`/v1/messages/${w.msg.id}/pin`),
  unpin: (w, a) => a.api.delete(`/v1/messages/${w.msg.id}/pin`),
  mark_read: (w, a) => a.api.post(`/v1/channels/${w.ch}/read`, acting(a)),
  mark_delivered: (w, a) => a.api.post(`/v1/channels/${w.ch}/delivered`, acting(a)),
  set_user_state: (w, a) => a.api.patch(`/v1/me/channels/${w.ch}/state`, { hidden: true }),
  update_channel: (w, a) =>
    a.for === undefined && a.label === 'backend'
      ? a.api.patch(`/v1/channels/${w.ch}`, { metadata: { topic: 'x' } })
      : a.api.patch(`/v1/me/channels/${w.ch}`, { metadata: { topic: 'x' } }),
  add_members: (w, a) => a.api.post(`/v1/me/channels/${w.ch}/members`, { member_external_ids: ['dee'] }),
  remove_members: (w, a) => a.api.delete(`/v1/me/channels/${w.ch}/members/cy`),
  set_role: (w, a) => a.api.patch(`/v1/me/channels/${w.ch}/members/cy`, { role: 'admin' }),
  ban_in_channel: (w, a) => a.api.post(`/v1/me/channels/${w.ch}/bans`, { user_external_id: 'cy' }),
} satisfies Record<string, Write>;
type Kind = keyof typeof WRITES;

/** A case: the write, who makes it, and the error it must get (null: it must succeed). */
type Case = [kind: Kind, actor: string, error: [status: number, code: string] | null];

interface Rule {
  name: string;
  /** Puts the world in the rule's condition. */
  setup?: (w: World) => Promise<void>;
  cases: Case[];
  /** Configuration of the app the rule runs on. */
  config?: Record<string, string>;
  /** Waited once after every world's setup. */
  wait?: number;
}

const NOT_A_MEMBER: [number, string] = [403, 'NOT_A_MEMBER'];
const FORBIDDEN: [number, string] = [403, 'FORBIDDEN'];
const FROZEN: [number, string] = [403, 'CHANNEL_FROZEN'];
const BANNED: [number, string] = [403, 'BANNED'];

async function ok(res: Response): Promise<void> {
  if (res.status >= 300) throw new Error(`expected success, got ${res.status} ${res.text}`);
}

const RULES: Rule[] = [
  {
    name: 'membership: a non-member is refused every write, whoever acts for them (403 NOT_A_MEMBER)',
    cases: [
      ...(Object.keys(WRITES) as Kind[]).map((k): Case => [k, 'dee', NOT_A_MEMBER]),
      ['send', 'backend for dee', NOT_A_MEMBER],
      ['react', 'backend for dee', NOT_A_MEMBER],
      ['unreact', 'backend for dee', NOT_A_MEMBER],
      ['mark_read', 'backend for dee', NOT_A_MEMBER],
      ['mark_delivered', 'backend for dee', NOT_A_MEMBER],
    ],
  },
  {
    name: 'role: managing a group is for its admins (403 FORBIDDEN); members do the rest',
    cases: [
      ['pin', 'cy', FORBIDDEN],
      ['unpin', 'cy', FORBIDDEN],
      ['update_channel', 'cy', FORBIDDEN],
      ['add_members', 'cy', FORBIDDEN],
      ['remove_members', 'bo', FORBIDDEN],
      ['set_role', 'bo', FORBIDDEN],
      ['ban_in_channel', 'bo', FORBIDDEN],
      ['pin', 'ana', null],
      ['unpin', 'ana', null],
      ['update_channel', 'ana', null],
      ['add_members', 'ana', null],
      ['remove_members', 'ana', null],
      ['set_role', 'ana', null],
      ['ban_in_channel', 'ana', null],
      ['send', 'cy', null],
      ['react', 'cy', null],
      ['mark_read', 'cy', null],
      ['set_user_state', 'cy', null],
      ['remove_members', 'cy', null], // cy leaving
    ],
  },
  {
    name: "frozen: users' sends, edits, reactions and unsends are refused (403 CHANNEL_FROZEN); the backend and the rest pass",
    setup: async (w) => ok(await w.ws.api.patch(`/v1/channels/${w.ch}`, { frozen: true })),
    cases: [
      ['send', 'bo', FROZEN],
      ['send', 'ana', FROZEN],
      ['edit', 'bo', FROZEN],
      ['unsend', 'bo', FROZEN],
      ['react', 'cy', FROZEN],
      ['unreact', 'cy', FROZEN],
      ['send', 'backend for bo', null],
      ['edit', 'backend', null],
      ['unsend', 'backend', null],
      ['react', 'backend for cy', null],
      ['unreact', 'backend for cy', null],
      ['pin', 'ana', null],
      ['mark_read', 'cy', null],
      ['mark_delivered', 'cy', null],
      ['set_user_state', 'cy', null],
      ['update_channel', 'ana', null],
      ['add_members', 'ana', null],
      ['remove_members', 'cy', null],
    ],
  },
  {
    name: 'authorship: a user edits and unsends only their own message (403 NOT_AUTHOR); the backend any',
    cases: [
      ['edit', 'cy', [403, 'NOT_AUTHOR']],
      ['unsend', 'cy', [403, 'NOT_AUTHOR']],
      ['edit', 'ana', [403, 'NOT_AUTHOR']],
      ['edit', 'bo', null],
      ['unsend', 'bo', null],
      ['edit', 'backend', null],
      ['unsend', 'backend', null],
    ],
  },
  {
    name: 'ban: a banned user cannot send, edit or react, whoever acts for them (403 BANNED); unsending and reading stay',
    setup: async (w) => ok(await w.ws.api.post(`/v1/channels/${w.ch}/bans`, { user_external_id: 'bo' })),
    cases: [
      ['send', 'bo', BANNED],
      ['edit', 'bo', BANNED],
      ['react', 'bo', BANNED],
      ['unreact', 'bo', BANNED],
      ['send', 'backend for bo', BANNED],
      ['react', 'backend for bo', BANNED],
      ['unsend', 'bo', null],
      ['mark_read', 'bo', null],
      ['set_user_state', 'bo', null],
      ['send', 'cy', null],
      ['edit', 'backend', null],
    ],
  },
  {
    name: 'mute: a muted user cannot send, whoever acts for them (403 MUTED); their other writes pass',
    cases: [
      ['send', 'eve', [403, 'MUTED']],
      ['send', 'backend for eve', [403, 'MUTED']],
      ['react', 'eve', null],
      ['unreact', 'eve', null],
      ['mark_read', 'eve', null],
      ['set_user_state', 'eve', null],
    ],
  },
  {
    name: 'an unsent message cannot be edited, reacted to or pinned (422 MESSAGE_DELETED); unsend, unreact and unpin answer it',
    setup: async (w) => ok(await w.ws.api.delete(`/v1/messages/${w.msg.id}`)),
    cases: [
      ['edit', 'bo', [422, 'MESSAGE_DELETED']],
      ['edit', 'backend', [422, 'MESSAGE_DELETED']],
      ['react', 'cy', [422, 'MESSAGE_DELETED']],
      ['pin', 'ana', [422, 'MESSAGE_DELETED']],
      ['unsend', 'bo', null],
      ['unreact', 'cy', null],
      ['unpin', 'ana', null],
    ],
  },
  {
    name: "slow mode: a member's second send within the window is refused (429 SLOW_MODE); admins, the backend and other writes pass",
    // bo's message of the world is bo's previous send
    setup: async (w) => ok(await w.ws.api.patch(`/v1/channels/${w.ch}`, { slow_mode_seconds: 60 })),
    cases: [
      ['send', 'bo', [429, 'SLOW_MODE']],
      ['send', 'backend for bo', null],
      ['send', 'ana', null],
      ['edit', 'bo', null],
      ['react', 'bo', null],
      ['mark_read', 'bo', null],
    ],
  },
  {
    name: 'windows: a user edits and unsends within the configured windows (422 EDIT_ / UNSEND_WINDOW_EXPIRED); the backend at any age',
    config: { SERVICE_EDIT_WINDOW_SECONDS: '1', SERVICE_UNSEND_WINDOW_SECONDS: '1' },
    wait: 1500,
    cases: [
      ['edit', 'bo', [422, 'EDIT_WINDOW_EXPIRED']],
      ['unsend', 'bo', [422, 'UNSEND_WINDOW_EXPIRED']],
      ['edit', 'backend', null],
      ['unsend', 'backend', null],
      ['react', 'bo', null],
    ],
  },
];

/** One app per configuration, shared by the rules that run on it (each in a workspace of its own). */
const apps = new Map<string, Promise<TestApp>>();
function appFor(config: Record<string, string> = {}): Promise<TestApp> {
  const key = JSON.stringify(config);
  let app = apps.get(key);
  if (!app) apps.set(key, (app = startTestApp(config)));
  return app;
}
afterAll(async () => {
  for (const app of apps.values()) await (await app).close();
});

describe.each(RULES.map((r) => [r.name, r] as const))('%s', (_name, rule) => {
  let t: TestApp;
  let ws: TestWorkspace;
  const users = new Map<string, TestUser>();
  const worlds: World[] = [];
  beforeAll(async () => {
    t = await appFor(rule.config);
    ws = await newWorkspace(t);
    for (const u of await ws.users('ana', 'bo', 'cy', 'dee', 'eve')) users.set(u.external_id, u);
    await ok(await ws.api.post('/v1/users/eve/mute', {}));
    for (const _ of rule.cases) {
      const ch = (await group(ws, 'ana', ['bo', 'cy', 'eve'])).id;
      const w: World = { ws, ch, msg: await send(users.get('bo')!, ch, 'from bo') };
      // eve's reaction to undo, cy's for the frozen and deleted cases, a pin to unpin
      await ok(
        await ws.api.post(`/v1/messages/${w.msg.id}/reactions`, { emoji: '👍', user_external_id: 'eve' }),
      );
      await ok(
        await ws.api.post(`/v1/messages/${w.msg.id}/reactions`, { emoji: '👍', user_external_id: 'cy' }),
      );
      await ok(await ws.api.post(`/v1/messages/${w.msg.id}/pin`));
      await rule.setup?.(w);
      worlds.push(w);
    }
    if (rule.wait) await sleep(rule.wait);
  });

  const actor = (who: string): Actor => {
    if (who === 'backend') return { api: ws.api, label: who };
    const forUser = /^backend for (\w+)$/.exec(who)?.[1];
    if (forUser) return { api: ws.api, for: forUser, label: who };
    return { api: users.get(who)!.api, label: who };
  };

  it.each(rule.cases.map((c, i) => [c[0], c[1], c[2] ? c[2].join(' ') : 'passes', i] as const))(
    '%s by %s: %s',
    async (kind, who, _expect, i) => {
      const [, , error] = rule.cases[i]!;
      const res = await WRITES[kind](worlds[i]!, actor(who));
      if (error) expectError(res, error[0], error[1]);
      else await ok(res);
    },
  );
});

describe("direct channels: either member manages what a direct channel has; its name, controls and bans are the backend's", () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let bo: TestUser;
  let w: World;
  beforeAll(async () => {
    t = await appFor();
    ws = await newWorkspace(t);
    bo = (await ws.users('bo', 'cy'))[0]!;
    const res = await ws.api.post('/v1/channels', { type: 'direct', member_external_ids: ['bo', 'cy'] });
    await ok(res);
    w = {
      ws,
      ch: (res.body as { id: string }).id,
      msg: await send(bo, (res.body as { id: string }).id, 'hi'),
    };
  });

  it('pin and unpin by either member pass; update and channel bans by a member are 403 FORBIDDEN, by the backend pass', async () => {
    const asBo: Actor = { api: bo.api, label: 'bo' };
    await ok(await WRITES.pin(w, asBo));
    await ok(await WRITES.unpin(w, asBo));
    expectError(await WRITES.update_channel(w, asBo), ...FORBIDDEN);
    expectError(await WRITES.ban_in_channel(w, asBo), ...FORBIDDEN);
    await ok(await WRITES.update_channel(w, { api: ws.api, label: 'backend' }));
    await ok(await ws.api.post(`/v1/channels/${w.ch}/bans`, { user_external_id: 'cy' }));
  });

  it('a channel update is decided membership first, then the fields a direct channel keeps, then who may change it', async () => {
    const dee = await ws.user('dee');
    expectError(await dee.api.patch(`/v1/me/channels/${w.ch}`, { name: 'x' }), ...NOT_A_MEMBER);
    expectError(await bo.api.patch(`/v1/me/channels/${w.ch}`, { name: 'x' }), 400, 'VALIDATION_ERROR');
    const frozen = await bo.api.patch(`/v1/me/channels/${w.ch}`, { frozen: true });
    expectError(frozen, ...FORBIDDEN);
    expect((frozen.body as { error: { message: string } }).error.message).toBe(
      'Only the backend can change a direct channel',
    );
    expectError(await ws.api.patch(`/v1/channels/${w.ch}`, { name: 'x' }), 400, 'VALIDATION_ERROR');
  });
});
