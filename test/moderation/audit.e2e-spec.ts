import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { group, room, send } from '../messages/helpers';
import { audit, AuditEntry, moderate, PROFANE } from './helpers';

describe('GET /v1/moderation/audit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('lists entries newest first with the contract fields and a short excerpt', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'flag', rules: ['profanity'] });
    const long = `${'blah '.repeat(60)}fuck ${'meh '.repeat(60)}`;
    const m = await send(ana, ch.id, long);
    const page = await audit(ws);
    expect(page).toEqual({ entries: [expect.any(Object)], has_more: false, next_cursor: null });
    const e = page.entries[0]!;
    expect(Object.keys(e).sort()).toEqual([
      'action',
      'channel_id',
      'created_at',
      'excerpt',
      'id',
      'message_id',
      'rule',
      'user_id',
    ]);
    expect(e).toMatchObject({
      channel_id: ch.id,
      user_id: ana.id,
      message_id: m.id,
      rule: 'profanity',
      action: 'flag',
    });
    expect(e.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Array.from(e.excerpt).length).toBeLessThanOrEqual(100);
    expect(e.excerpt).toContain('fuck');
  });

  it('filters by user (external id), channel (id or external_id) and rule, and pages with limit/before', async () => {
    const { ws, ch, ana, bo } = await room(t);
    const other = await group(ws, 'ana', ['bo']);
    await moderate(ws, { action: 'flag', rules: ['profanity', 'link'] });
    await send(ana, ch.id, PROFANE);
    await send(bo, ch.id, 'example.com');
    await send(ana, other.id, 'example.com');
    await send(bo, other.id, 'shit');
    await send(ana, ch.id, 'shit at example.com');

    const all = (await audit(ws)).entries;
    expect(all).toHaveLength(6);
    const sig = (es: AuditEntry[]) =>
      es.map(
        (e) => `${e.user_id === ana.id ? 'ana' : 'bo'}:${e.channel_id === ch.id ? 'ch' : 'other'}:${e.rule}`,
      );
    expect(sig((await audit(ws, { user: 'ana' })).entries).sort()).toEqual(
      ['ana:ch:link', 'ana:ch:profanity', 'ana:ch:profanity', 'ana:other:link'].sort(),
    );
    expect(sig((await audit(ws, { channel: other.id })).entries).sort()).toEqual([
      'ana:other:link',
      'bo:other:profanity',
    ]);
    expect(sig((await audit(ws, { channel: other.external_id })).entries).sort()).toEqual([
      'ana:other:link',
      'bo:other:profanity',
    ]);
    expect(sig((await audit(ws, { rule: 'link', user: 'bo' })).entries)).toEqual(['bo:ch:link']);
    expect((await audit(ws, { user: 'nobody' })).entries).toEqual([]);
    expect((await audit(ws, { channel: 'no-such-channel' })).entries).toEqual([]);
    expect((await audit(ws, { rule: 'phone' })).entries).toEqual([]);

    const seen: string[] = [];
    let page = await audit(ws, { limit: 4 });
    expect(page.has_more).toBe(true);
    seen.push(...page.entries.map((e) => e.id));
    page = await audit(ws, { limit: 4, before: page.next_cursor! });
    expect([page.has_more, page.next_cursor]).toEqual([false, null]);
    seen.push(...page.entries.map((e) => e.id));
    expect(seen).toEqual(all.map((e) => e.id));
    const filtered = await audit(ws, { user: 'ana', limit: 1 });
    const next = await audit(ws, { user: 'ana', limit: 10, before: filtered.next_cursor! });
    expect(next.entries).toHaveLength(3);
  });

  it('keeps the entries of a deleted channel, still found by its id or external_id', async () => {
    const { ws, ch, ana } = await room(t);
    await moderate(ws, { action: 'flag', rules: ['profanity'] });
    await send(ana, ch.id, PROFANE);
    expect((await ws.api.delete(`/v1/channels/${ch.id}`)).status).toBe(204);
    expect((await audit(ws, { channel: ch.id })).entries).toHaveLength(1);
    expect((await audit(ws, { channel: ch.external_id })).entries).toHaveLength(1);
  });

  it('never shows another workspace its entries', async () => {
    const a = await room(t);
    const b = await room(t);
    await moderate(a.ws, { action: 'flag', rules: ['profanity'] });
    await send(a.ana, a.ch.id, PROFANE);
    expect((await audit(a.ws)).entries).toHaveLength(1);
    expect((await audit(b.ws)).entries).toEqual([]);
    expect((await audit(b.ws, { channel: a.ch.id })).entries).toEqual([]);
    expect((await audit(b.ws, { user: 'ana' })).entries).toEqual([]);
  });

  it('is for backend keys only and validates its query', async () => {
    const { ws, ana } = await room(t);
    expectError(await ana.api.get('/v1/moderation/audit'), 403, 'FORBIDDEN');
    expectError(await t.http().get('/v1/moderation/audit'), 401, 'UNAUTHORIZED');
    expectError(await ws.api.get('/v1/moderation/audit?rule=spam'), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/moderation/audit?limit=0'), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/moderation/audit?limit=101'), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/moderation/audit?before=junk'), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/moderation/audit?colour=red'), 400, 'VALIDATION_ERROR');
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await t.http().get('/docs-json')).body as { paths: Record<string, { get?: unknown }> };
    expect(doc.paths['/v1/moderation/audit']?.get).toBeDefined();
  });
});
