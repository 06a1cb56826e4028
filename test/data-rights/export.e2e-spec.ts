import { mkdtempSync, rmSync } from 'fs';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Readable } from 'stream';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { loadConfig } from '../../src/config/config.schema';
import { ExportBuildProcessor } from '../../src/exports/export-build.processor';
import { ExportSweeper } from '../../src/exports/export-sweeper.service';
import { MIN_PART_BYTES, S3ObjectStorage } from '../../src/infra/storage/s3.storage';
import { group, room, send, sleep } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { newWorkspace, TestWorkspace } from '../support/fixtures';

/** The export object of CONTRACT §20. */
interface ExportView {
  id: string;
  user_external_id: string;
  status: 'pending' | 'ready' | 'failed';
  download_url?: string;
  expires_at?: string;
  created_at: string;
}

interface ExportedMessage {
  id: string;
  channel_id: string;
  content: string;
  edited_at: string | null;
  deleted_at: string | null;
  thread_id: string | null;
  shadowed: boolean;
  reactions: { emoji: string; user_external_id: string }[];
}

interface ExportDocument {
  format: string;
  export_id: string;
  user: { id: string; external_id: string; name: string };
  moderation_mute: unknown;
  memberships: {
    channel_id: string;
    channel_external_id: string;
    role: string | null;
    last_read_at: string;
  }[];
  messages: ExportedMessage[];
  reactions: { message_id: string; emoji: string }[];
  blocks: { external_id: string }[];
  devices: { platform: string; token_last4: string | null; token_length: number }[];
  flags: {
    target_type: string;
    message_id: string | null;
    user_external_id: string | null;
    reason: string | null;
  }[];
  bans: { channel_id: string | null; shadow: boolean; reason: string | null; expires_at: string | null }[];
  drafts: { channel_id: string; thread_id: string | null; content: string; mentions: string[] }[];
  reminders: { message_id: string; channel_id: string; remind_at: string | null; status: string }[];
  scheduled_messages: { channel_id: string; content: string; scheduled_at: string; status: string }[];
  poll_votes: { message_id: string; question: string; option_id: string; option: string }[];
}

const TTL_SECONDS = 2;
const READY_MS = 20_000;

async function requestExport(ws: TestWorkspace, externalId: string): Promise<string> {
  const res = await ws.api.post(`/v1/users/${encodeURIComponent(externalId)}/exports`);
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ id: expect.any(String), status: 'pending' });
  return (res.body as { id: string }).id;
}

/** Polls until the export leaves `pending`. */
async function settled(ws: TestWorkspace, id: string): Promise<ExportView> {
  const until = Date.now() + READY_MS;
  for (;;) {
    const res = await ws.api.get(`/v1/exports/${id}`);
    expect(res.status).toBe(200);
    const view = res.body as ExportView;
    if (view.status !== 'pending') return view;
    if (Date.now() > until) throw new Error(`export ${id} still pending after ${READY_MS} ms`);
    await sleep(100);
  }
}

/** The document at a ready export's download_url, fetched with no credentials at all. */
async function download(view: ExportView): Promise<{ text: string; doc: ExportDocument }> {
  const res = await fetch(view.download_url!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const text = await res.text();
  return { text, doc: JSON.parse(text) as ExportDocument };
}

async function exportOf(
  ws: TestWorkspace,
  externalId: string,
): Promise<{ view: ExportView; text: string; doc: ExportDocument }> {
  const view = await settled(ws, await requestExport(ws, externalId));
  expect(view.status).toBe('ready');
  return { view, ...(await download(view)) };
}

/** Inserts `n` messages of the user straight into the table, all with one created_at (keyset ties). */
async function seedMessages(
  t: TestApp,
  ws: TestWorkspace,
  channelId: string,
  userId: string,
  n: number,
  at: string,
) {
  await t.app.get(DataSource).query(
    `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
     SELECT gen_random_uuid(), $1, $2, $3, $6, 'text', 'seeded ' || i, $5::timestamptz
       FROM generate_series(1, $4::int) AS i`,
    [ws.id, channelId, userId, n, at, userId],
  );
}

/** CONTRACT §20: user data exports on the local storage driver. */
describe('data rights: user exports', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SERVICE_EXPORT_DOWNLOAD_TTL_SECONDS: String(TTL_SECONDS) });
  });
  afterAll(async () => {
    await t.close();
  });

  it('goes pending → ready; the document holds exactly the user’s own data, edits in their final state', async () => {
    const { ws, ch, ana, bo, cy } = await room(t);
    const a1 = await send(ana, ch.id, 'ana one');
    const a2 = await send(ana, ch.id, 'ana draft');
    expect((await ana.api.patch(`/v1/messages/${a2.id}`, { content: 'ana final' })).status).toBe(200);
    const a3 = await send(ana, ch.id, 'ana regret');
    expect((await ana.api.delete(`/v1/messages/${a3.id}`)).status).toBe(200);
    const reply = await send(ana, ch.id, { content: 'ana in a thread', thread_id: a1.id });
    const b1 = await send(bo, ch.id, 'bo secret words');
    const c1 = await send(cy, ch.id, { content: 'cy in the thread', thread_id: a1.id });
    expect((await ana.api.post(`/v1/messages/${b1.id}/reactions`, { emoji: '👍' })).status).toBe(200);
    expect((await bo.api.post(`/v1/messages/${a1.id}/reactions`, { emoji: '🎉' })).status).toBe(200);
    expect((await cy.api.post(`/v1/messages/${b1.id}/reactions`, { emoji: '🔥' })).status).toBe(200);
    expect((await ana.api.post('/v1/me/blocks', { external_id: 'cy' })).status).toBe(201);
    expect((await bo.api.post('/v1/me/blocks', { external_id: 'ana' })).status).toBe(201);
    const token = `fcm-${'x'.repeat(40)}-tail`;
    expect((await ana.api.post('/v1/me/devices', { token, platform: 'android' })).status).toBe(201);
    const other = await group(ws, 'bo', ['cy']); // ana is no member
    const b2 = await send(bo, other.id, 'bo elsewhere');
    // scheduled messages: ana's, not bo's (before the drafts: scheduling takes the channel's draft)
    const laterAt = new Date(Date.now() + 3600_000).toISOString();
    const later = (u: typeof ana, content: string) =>
      u.api.post(`/v1/channels/${ch.id}/messages`, { content, scheduled_at: laterAt });
    expect((await later(ana, 'ana later')).status).toBe(202);
    expect((await later(bo, 'bo later')).status).toBe(202);

    // drafts: ana's own (channel and thread), not bo's
    const draft = { content: 'ana half-typed words', mentions: ['bo'] };
    expect((await ana.api.put(`/v1/channels/${ch.id}/draft`, draft)).status).toBe(201);
    const threadDraft = { content: 'ana thread draft', thread_id: a1.id };
    expect((await ana.api.put(`/v1/channels/${ch.id}/draft`, threadDraft)).status).toBe(201);
    expect((await bo.api.put(`/v1/channels/${ch.id}/draft`, { content: 'bo unsent draft' })).status).toBe(
      201,
    );

    // reminders: ana's (one saved, one upcoming), not bo's
    const remindAt = new Date(Date.now() + 3600_000).toISOString();
    expect((await ana.api.post(`/v1/messages/${b1.id}/reminder`, {})).status).toBe(201);
    expect((await ana.api.post(`/v1/messages/${a1.id}/reminder`, { remind_at: remindAt })).status).toBe(201);
    expect((await bo.api.post(`/v1/messages/${b1.id}/reminder`, {})).status).toBe(201);

    // poll votes: ana's choice in bo's anonymous poll (her own data), not bo's
    const poll = (
      await bo.api.post(`/v1/channels/${ch.id}/polls`, {
        question: 'bo asks',
        options: ['yes', 'no'],
        anonymous: true,
      })
    ).body as { id: string; poll: { id: string; options: { id: string }[] } };
    const [yes, no] = poll.poll.options.map((o) => o.id) as [string, string];
    expect((await ana.api.put(`/v1/messages/${poll.id}/poll/vote`, { option_ids: [no] })).status).toBe(200);
    expect((await bo.api.put(`/v1/messages/${poll.id}/poll/vote`, { option_ids: [yes] })).status).toBe(200);

    const id = await requestExport(ws, 'ana');
    const pending = await ws.api.get(`/v1/exports/${id}`);
    expect(pending.status).toBe(200);
    expect(['pending', 'ready']).toContain((pending.body as ExportView).status);
    const view = await settled(ws, id);
    expect(view).toEqual({
      id,
      user_external_id: 'ana',
      status: 'ready',
      download_url: expect.any(String),
      expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const days = (Date.parse(view.expires_at!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const { text, doc } = await download(view);
    expect(doc.format).toBe('chat-service/user-export');
    expect(doc.export_id).toBe(id);
    expect(doc.user).toMatchObject({ id: ana.id, external_id: 'ana', name: 'Ana' });
    expect(doc.moderation_mute).toBeNull();
    expect(doc.memberships).toEqual([
      expect.objectContaining({ channel_id: ch.id, channel_external_id: ch.external_id, role: 'admin' }),
    ]);
    expect(doc.memberships[0]!.last_read_at).toMatch(/Z$/);

    // every message ana wrote (the unsent one blank, the thread reply too), nobody else's
    expect(doc.messages.map((m) => m.id).sort()).toEqual([a1.id, a2.id, a3.id, reply.id].sort());
    const byId = new Map(doc.messages.map((m) => [m.id, m]));
    expect(byId.get(a2.id)).toMatchObject({ content: 'ana final', edited_at: expect.any(String) });
    expect(byId.get(a3.id)).toMatchObject({ content: '', deleted_at: expect.any(String) });
    expect(byId.get(reply.id)).toMatchObject({ thread_id: a1.id, content: 'ana in a thread' });
    expect(byId.get(a1.id)!.reactions).toEqual([
      expect.objectContaining({ emoji: '🎉', user_external_id: 'bo' }),
    ]);
    // reactions both ways: the one ana made on bo's message (not cy's on the same message)
    expect(doc.reactions).toEqual([expect.objectContaining({ message_id: b1.id, emoji: '👍' })]);
    expect(doc.blocks).toEqual([expect.objectContaining({ external_id: 'cy' })]);
    expect(doc.devices).toEqual([
      {
        platform: 'android',
        token_last4: 'tail',
        token_length: token.length,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);

    expect(
      doc.drafts
        .map((d) => [d.channel_id, d.thread_id, d.content, d.mentions])
        .sort((a, b) => String(a[2]).localeCompare(String(b[2]))),
    ).toEqual([
      [ch.id, null, draft.content, ['bo']],
      [ch.id, a1.id, threadDraft.content, []],
    ]);

    expect(
      doc.reminders
        .map((r) => [r.message_id, r.channel_id, r.remind_at, r.status])
        .sort((a, b) => String(a[3]).localeCompare(String(b[3]))),
    ).toEqual([
      [b1.id, ch.id, null, 'saved'],
      [a1.id, ch.id, remindAt, 'upcoming'],
    ]);
    expect(doc.scheduled_messages.map((x) => [x.channel_id, x.content, x.scheduled_at, x.status])).toEqual([
      [ch.id, 'ana later', laterAt, 'pending'],
    ]);
    expect(doc.poll_votes.map((v) => [v.message_id, v.question, v.option_id, v.option])).toEqual([
      [poll.id, 'bo asks', no, 'no'],
    ]);

    // the whole document, scanned: no other user's content, no full token
    for (const foreign of [
      b1.content,
      c1.content,
      b2.content,
      '🔥',
      'ana draft',
      'ana regret',
      'bo unsent draft',
      'bo later',
    ]) {
      expect(text).not.toContain(foreign);
    }
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(0, 20));
  });

  it('answers the export of a user without messages, with empty lists', async () => {
    const ws = await newWorkspace(t);
    await ws.user('dee', 'Dee');
    const { doc } = await exportOf(ws, 'dee');
    expect(doc.user.external_id).toBe('dee');
    expect([
      doc.messages,
      doc.memberships,
      doc.reactions,
      doc.blocks,
      doc.devices,
      doc.drafts,
      doc.reminders,
      doc.scheduled_messages,
      doc.poll_votes,
    ]).toEqual([[], [], [], [], [], [], [], [], []]);
  });

  it('holds the flags the user raised (targets by id, never their content) and the user’s bans, shadow ones marked', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const theirs = await send(bo, ch.id, 'bo-secret-words');
    expect((await ana.api.post(`/v1/messages/${theirs.id}/flag`, { reason: 'spam' })).status).toBe(201);
    expect((await ana.api.post('/v1/users/bo/flag', { reason: 'rude' })).status).toBe(201);
    expect((await bo.api.post('/v1/users/ana/flag', { reason: 'about ana' })).status).toBe(201);
    await ws.api.post('/v1/users/ana/ban', { shadow: true, reason: 'spam wave' });
    const mine = await send(ana, ch.id, 'sent while shadowed');
    await ws.api.post(`/v1/channels/${ch.id}/bans`, {
      user_external_id: 'ana',
      reason: 'cool off',
      duration_seconds: 600,
    });
    const { text, doc } = await exportOf(ws, 'ana');
    expect(doc.flags.map((f) => [f.target_type, f.message_id, f.user_external_id, f.reason])).toEqual([
      ['message', theirs.id, null, 'spam'],
      ['user', null, 'bo', 'rude'],
    ]);
    expect(text).not.toContain('bo-secret-words');
    expect(text).not.toContain('about ana'); // flags about her are not hers
    expect(doc.bans.map((b) => [b.channel_id, b.shadow, b.reason, b.expires_at === null])).toEqual([
      [null, true, 'spam wave', true],
      [ch.id, false, 'cool off', false],
    ]);
    expect(doc.messages.find((m) => m.id === mine.id)).toMatchObject({
      content: 'sent while shadowed',
      shadowed: true,
    });
  });

  it('reads past one page: 2,500 messages in two channels, all with one created_at, each exactly once', async () => {
    const { ws, ch, ana } = await room(t);
    const other = await group(ws, 'ana', ['bo']);
    const at = new Date().toISOString();
    await seedMessages(t, ws, ch.id, ana.id, 1_300, at);
    await seedMessages(t, ws, other.id, ana.id, 1_200, at);
    const { doc } = await exportOf(ws, 'ana');
    expect(doc.messages).toHaveLength(2_500);
    expect(new Set(doc.messages.map((m) => m.id)).size).toBe(2_500);
    expect(doc.memberships.map((m) => m.channel_id).sort()).toEqual([ch.id, other.id].sort());
  });

  it('the download_url works without credentials and stops working once its signature expires', async () => {
    const { ws, ch, ana } = await room(t);
    await send(ana, ch.id, 'hello');
    const { view } = await exportOf(ws, 'ana');
    const url = new URL(view.download_url!);
    expect(url.origin).toBe(t.baseUrl);
    expect(Number(url.searchParams.get('expires')) - Date.now() / 1000).toBeLessThanOrEqual(TTL_SECONDS);
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-disposition')).toMatch(/^attachment; filename="user-export-/);

    // altered: another type, or another key under the same signature
    const typed = new URL(url);
    typed.searchParams.set('type', 'text/html');
    expect((await fetch(typed)).status).toBe(403);
    const moved = new URL(url);
    moved.pathname = moved.pathname.replace(view.id, newId());
    expect((await fetch(moved)).status).toBe(403);

    await sleep((TTL_SECONDS + 1.2) * 1000);
    const late = await fetch(url);
    expect(late.status).toBe(403);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    // every GET signs a fresh one
    const again = (await ws.api.get(`/v1/exports/${view.id}`)).body as ExportView;
    expect(again.download_url).not.toBe(view.download_url);
    expect((await fetch(again.download_url!)).status).toBe(200);
  });

  it('is the backend key’s: 404 for an unknown user, another workspace’s export or a malformed id; 401/403 otherwise', async () => {
    const { ws, ana } = await room(t);
    const id = await requestExport(ws, 'ana');
    const other = await newWorkspace(t);
    expectError(await other.api.get(`/v1/exports/${id}`), 404, 'NOT_FOUND');
    expectError(await ws.api.post('/v1/users/nobody/exports'), 404, 'NOT_FOUND');
    expectError(await ws.api.get(`/v1/exports/${newId()}`), 404, 'NOT_FOUND');
    expectError(await ws.api.get('/v1/exports/not-a-uuid'), 404, 'NOT_FOUND');
    expectError(await ana.api.post('/v1/users/ana/exports'), 403, 'FORBIDDEN');
    expectError(await ana.api.get(`/v1/exports/${id}`), 403, 'FORBIDDEN');
    expectError(await t.http().get(`/v1/exports/${id}`), 401, 'UNAUTHORIZED');
    await settled(ws, id);
  });

  it('a request while one is pending answers that export; a retried job finds it ready or rebuilds it', async () => {
    const { ws, ch, ana } = await room(t);
    await send(ana, ch.id, 'kept');
    const db = t.app.get(DataSource);
    // a pending export whose build another worker holds (a live lease), as if requested a moment ago
    const first = newId();
    await db.query(
      `INSERT INTO user_exports (id, workspace_id, user_id, user_external_id, attempts, lease_owner, lease_until)
       VALUES ($1, $2, $3, 'ana', 1, $4, now() + interval '1 hour')`,
      [first, ws.id, ana.id, newId()],
    );
    expect(await requestExport(ws, 'ana')).toBe(first);
    expect(await requestExport(ws, 'ana')).toBe(first);
    const processor = t.app.get(ExportBuildProcessor);
    await processor.handle({ exportId: first }); // the lease is live: nothing happens
    expect(((await ws.api.get(`/v1/exports/${first}`)).body as ExportView).status).toBe('pending');

    // the holder died: its lease ran out, and a retry builds the export
    await db.query(`UPDATE user_exports SET lease_until = now() - interval '1 second' WHERE id = $1`, [
      first,
    ]);
    await processor.handle({ exportId: first });
    const ready = await settled(ws, first);
    expect(ready.status).toBe('ready');
    const stateOf = () =>
      db.query<{ attempts: number; ready_at: Date }[]>(
        `SELECT attempts, ready_at FROM user_exports WHERE id = $1`,
        [first],
      );
    const [row] = await stateOf();
    // once more: finds it ready and leaves it as it is
    await processor.handle({ exportId: first });
    const [after] = await stateOf();
    expect(after).toEqual(row);
    expect((await download(ready)).doc.messages.map((m) => m.content)).toEqual(['kept']);
    // a new request after that one is a new export
    const second = await requestExport(ws, 'ana');
    expect(second).not.toBe(first);
    await settled(ws, second);
  });

  it('the sweeper deletes exports 7 days after they became ready (row and file), and those of deleted users', async () => {
    const { ws } = await room(t);
    const { view } = await exportOf(ws, 'ana');
    const sweeper = t.app.get(ExportSweeper);
    expect((await sweeper.sweep(new Date(Date.now() + 6 * 86_400_000))).deleted).toBe(0);
    expect((await fetch(view.download_url!)).status).toBe(200);
    const swept = await sweeper.sweep(new Date(Date.parse(view.expires_at!) + 1000));
    expect(swept.deleted).toBeGreaterThanOrEqual(1);
    expectError(await ws.api.get(`/v1/exports/${view.id}`), 404, 'NOT_FOUND');
    expect((await fetch(view.download_url!)).status).toBe(404); // signature still valid, the file is gone

    const dee = await ws.user('dee', 'Dee');
    const { view: deeExport } = await exportOf(ws, dee.external_id);
    expect((await ws.api.delete(`/v1/users/${dee.external_id}`)).status).toBe(204);
    await sweeper.sweep();
    expectError(await ws.api.get(`/v1/exports/${deeExport.id}`), 404, 'NOT_FOUND');
    expect((await fetch(deeExport.download_url!)).status).toBe(404);
  });

  it('documents both routes in OpenAPI with their responses', async () => {
    const doc = (await t.http().get('/docs-json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    // and the errors every route can answer (a malformed request, a bug, a dependency down)
    expect(Object.keys(doc.paths['/v1/users/{external_id}/exports']!.post!.responses).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '500',
      '503',
    ]);
    expect(Object.keys(doc.paths['/v1/exports/{id}']!.get!.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '500',
      '503',
    ]);
    expect(Object.keys(doc.components.schemas.Export!.properties!).sort()).toEqual([
      'created_at',
      'download_url',
      'expires_at',
      'id',
      'status',
      'user_external_id',
    ]);
    expect(Object.keys(doc.components.schemas.ExportRequested!.properties!).sort()).toEqual(['id', 'status']);
  });
});

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverInstance;
// s3rver ships no type declarations
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as S3rverCtor;
const BUCKET = 'chat-files';

/** The s3 driver against s3rver (an S3 emulator on an ephemeral port; it does not check signatures). */
describe('data rights: user exports on the s3 driver (s3rver)', () => {
  let s3: S3rverInstance;
  let dir: string;
  let endpoint: string;
  let t: TestApp;
  const s3env = (bucket: string) => ({
    SERVICE_STORAGE_DRIVER: 's3',
    SERVICE_S3_BUCKET: bucket,
    SERVICE_S3_ENDPOINT: endpoint,
    SERVICE_S3_FORCE_PATH_STYLE: 'true',
    SERVICE_S3_REGION: 'us-east-1',
    SERVICE_S3_ACCESS_KEY_ID: 'S3RVER',
    SERVICE_S3_SECRET_ACCESS_KEY: 'S3RVER',
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 's3rver-'));
    s3 = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: dir,
      configureBuckets: [{ name: BUCKET }],
    });
    const { port } = await s3.run();
    endpoint = `http://127.0.0.1:${port}`;
    t = await startTestApp(s3env(BUCKET));
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores the document in the bucket and answers a presigned GET of it as application/json', async () => {
    const { ws, ch, ana, bo } = await room(t);
    await send(ana, ch.id, 'ana to s3');
    await send(bo, ch.id, 'bo to s3');
    const { view, text, doc } = await exportOf(ws, 'ana');
    const u = new URL(view.download_url!);
    expect(`${u.origin}${u.pathname}`).toBe(`${endpoint}/${BUCKET}/exports/${ws.id}/${view.id}.json`);
    expect(u.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(u.searchParams.get('response-content-type')).toBe('application/json');
    expect(doc.messages.map((m) => m.content)).toEqual(['ana to s3']);
    expect(text).not.toContain('bo to s3');

    await t.app.get(ExportSweeper).sweep(new Date(Date.parse(view.expires_at!) + 1000));
    expect((await fetch(`${endpoint}/${BUCKET}/exports/${ws.id}/${view.id}.json`)).status).toBe(404);
  });

  it('uploads a long stream as a multipart upload, one part in memory at a time', async () => {
    const storage = new S3ObjectStorage(loadConfig(s3env(BUCKET)), undefined, MIN_PART_BYTES);
    const chunk = Buffer.alloc(256 * 1024, 'a');
    const chunks = 45; // 11.25 MiB: three parts
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < chunks; i++) yield chunk;
      })(),
      { objectMode: false },
    );
    const key = `exports/test/${newId()}.json`;
    expect(await storage.putStream(key, body, 'application/json')).toBe(chunk.length * chunks);
    const got = await fetch(`${endpoint}/${BUCKET}/${key}`);
    expect(Buffer.from(await got.arrayBuffer()).length).toBe(chunk.length * chunks);
    await storage.delete(key);
    expect((await fetch(`${endpoint}/${BUCKET}/${key}`)).status).toBe(404);
    storage.close();
  });

  it('marks the export failed when storage keeps failing (after its retries), with no download_url', async () => {
    const broken = await startTestApp(s3env('no-such-bucket'));
    try {
      const ws = await newWorkspace(broken);
      await ws.user('ana', 'Ana');
      const res = await ws.api.post('/v1/users/ana/exports');
      expect(res.status).toBe(202);
      const id = (res.body as { id: string }).id;
      const until = Date.now() + 30_000;
      let view: ExportView;
      for (;;) {
        view = (await ws.api.get(`/v1/exports/${id}`)).body as ExportView;
        if (view.status !== 'pending' || Date.now() > until) break;
        await sleep(200);
      }
      expect(view).toEqual({
        id,
        user_external_id: 'ana',
        status: 'failed',
        expires_at: expect.any(String),
        created_at: expect.any(String),
      });
      const [row] = await broken.app
        .get(DataSource)
        .query<{ attempts: number }[]>(`SELECT attempts FROM user_exports WHERE id = $1`, [id]);
      expect(row!.attempts).toBe(3);
    } finally {
      await broken.close();
    }
  });
});
