import { DataSource, EntityManager } from 'typeorm';
import { SearchRepository } from '../../src/search/search.repository';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { Client, newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

interface Hit {
  id: string;
  content: string;
  channel_id: string;
  highlights: [number, number][];
  deleted_at: string | null;
}
interface Page {
  messages: Hit[];
  has_more: boolean;
  next_cursor: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('search (CONTRACT §8)', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser;
  let bo: TestUser;
  let cy: TestUser;
  let ch: { id: string; external_id: string };

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    ana = await ws.user('ana');
    bo = await ws.user('bo');
    cy = await ws.user('cy');
    ch = await group(['bo', 'cy']);
  });

  async function group(members: string[], by = 'ana'): Promise<{ id: string; external_id: string }> {
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: `g-${Math.random().toString(36).slice(2)}`,
      created_by: by,
      member_external_ids: members,
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; external_id: string };
  }

  async function send(
    u: TestUser,
    content: string,
    extra: Record<string, unknown> = {},
    channel = ch,
  ): Promise<{ id: string; created_at: string }> {
    const res = await u.api.post(`/v1/channels/${channel.id}/messages`, { content, ...extra });
    if (res.status !== 201) throw new Error(`send answered ${res.status} ${res.text}`);
    return res.body as { id: string; created_at: string };
  }

  async function searchIn(
    api: Client,
    q: string,
    query: Record<string, string | number> = {},
    channel: string = ch.id,
  ): Promise<Page> {
    const res = await api
      .get(`/v1/channels/${encodeURIComponent(channel)}/messages/search`)
      .query({ q, ...query });
    if (res.status !== 200) throw new Error(`search ${JSON.stringify(q)} answered ${res.status} ${res.text}`);
    return res.body as Page;
  }

  async function searchAll(
    api: Client,
    q: string,
    query: Record<string, string | number> = {},
  ): Promise<Page> {
    const res = await api.get('/v1/search/messages').query({ q, ...query });
    if (res.status !== 200) throw new Error(`search ${JSON.stringify(q)} answered ${res.status} ${res.text}`);
    return res.body as Page;
  }

  const ids = (p: Page) => p.messages.map((m) => m.id);
  const sorted = (a: string[]) => [...a].sort();

  describe('syntax', () => {
    it('finds a word by channel id and external_id, in the history shape, with the message object', async () => {
      const fox = await send(ana, 'the quick brown fox jumps');
      await send(bo, 'a lazy dog sleeps');
      for (const ref of [ch.id, ch.external_id]) {
        const page = await searchIn(bo.api, 'fox', {}, ref);
        expect(page).toMatchObject({ has_more: false, next_cursor: null });
        expect(ids(page)).toEqual([fox.id]);
        expect(page.messages[0]).toMatchObject({
          id: fox.id,
          channel_id: ch.id,
          content: 'the quick brown fox jumps',
          type: 'text',
          deleted_at: null,
          user: { external_id: 'ana' },
        });
      }
    });

    it('a quoted phrase matches only those words in that order, adjacent; punctuation between them does not matter', async () => {
      const hit = await send(ana, 'we need quick brown paper');
      const comma = await send(ana, 'Quick, brown... and done');
      await send(ana, 'brown and quick decisions');
      await send(ana, 'quick thinking with brown shoes');
      expect(sorted(ids(await searchIn(ana.api, '"quick brown"')))).toEqual(sorted([hit.id, comma.id]));
      expect(ids(await searchIn(ana.api, '"brown quick"'))).toEqual([]);
      // without quotes both words anywhere
      expect(ids(await searchIn(ana.api, 'quick brown'))).toHaveLength(4);
    });

    it('OR matches either side, binds tighter than the implicit AND, and only in capitals between terms', async () => {
      const a = await send(ana, 'apple pie');
      const b = await send(ana, 'banana split');
      await send(ana, 'cherry tart');
      const or = await send(ana, 'this or that');
      const ab = await send(ana, 'apple banana smoothie');
      expect(sorted(ids(await searchIn(ana.api, 'apple OR banana')))).toEqual(sorted([a.id, b.id, ab.id]));
      expect(sorted(ids(await searchIn(ana.api, 'apple OR banana smoothie')))).toEqual([ab.id]);
      expect(sorted(ids(await searchIn(ana.api, '"apple pie" OR "banana split"')))).toEqual(
        sorted([a.id, b.id]),
      );
      expect(ids(await searchIn(ana.api, 'or'))).toEqual([or.id]); // lower-case or is a word
      expect(sorted(ids(await searchIn(ana.api, 'OR apple OR')))).toEqual(sorted([a.id, ab.id])); // dangling ORs are ignored
    });

    it('-word and -"phrase" exclude; a query of exclusions only is 400', async () => {
      const pie = await send(ana, 'apple pie');
      const tart = await send(ana, 'apple tart');
      const both = await send(ana, 'apple pie and apple tart');
      expect(sorted(ids(await searchIn(ana.api, 'apple -tart')))).toEqual([pie.id]);
      expect(sorted(ids(await searchIn(ana.api, 'apple -"apple tart"')))).toEqual([pie.id]);
      expect(sorted(ids(await searchIn(ana.api, 'apple -"tart apple"')))).toEqual(
        sorted([pie.id, tart.id, both.id]),
      );
      expect(sorted(ids(await searchIn(ana.api, 'e-mail OR apple -pie')))).toEqual([tart.id]); // - inside a word is punctuation
      expectError(
        await ana.api.get(`/v1/channels/${ch.id}/messages/search`).query({ q: '-apple' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await ana.api.get('/v1/search/messages').query({ q: '-apple -"pie"' }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('is case-insensitive in any script, ignores punctuation and does not stem', async () => {
      const zebra = await send(ana, 'Zebra Crossing ahead!');
      const ecole = await send(ana, "L'ÉCOLE est fermée. Привет, МИР!");
      const run = await send(ana, 'running late, e-mail me');
      expect(ids(await searchIn(ana.api, 'zebra'))).toEqual([zebra.id]);
      expect(ids(await searchIn(ana.api, 'CROSSING'))).toEqual([zebra.id]);
      expect(ids(await searchIn(ana.api, 'ahead?!'))).toEqual([zebra.id]);
      expect(ids(await searchIn(ana.api, 'école'))).toEqual([ecole.id]);
      expect(ids(await searchIn(ana.api, 'мир привет'))).toEqual([ecole.id]);
      expect(ids(await searchIn(ana.api, 'FERMÉE'))).toEqual([ecole.id]);
      expect(ids(await searchIn(ana.api, 'run'))).toEqual([]); // no stemming
      expect(ids(await searchIn(ana.api, 'runn'))).toEqual([]); // no prefix matching of words
      expect(ids(await searchIn(ana.api, 'e-mail'))).toEqual([run.id]);
      expect(ids(await searchIn(ana.api, '"e mail"'))).toEqual([run.id]);
    });

    it('finds any run of two or more characters inside text without spaces (Chinese, Japanese, Thai, Korean)', async () => {
      const zh = await send(ana, '明天的会议在三点');
      await send(ana, '今天天气很好');
      const ja = await send(ana, '会議は明日の午後です。');
      const th = await send(ana, 'ประชุมพรุ่งนี้ตอนบ่ายสาม');
      const ko = await send(ana, '회의는 내일입니다');
      const mixed = await send(ana, '买了iPhone手机，很好用');
      expect(ids(await searchIn(ana.api, '会议'))).toEqual([zh.id]);
      expect(ids(await searchIn(ana.api, '三点'))).toEqual([zh.id]);
      expect(ids(await searchIn(ana.api, '会议在三点'))).toEqual([zh.id]);
      expect(ids(await searchIn(ana.api, '会在'))).toEqual([]); // both characters are there, not as a run
      expect(ids(await searchIn(ana.api, '明日'))).toEqual([ja.id]);
      expect(ids(await searchIn(ana.api, '午後'))).toEqual([ja.id]);
      expect(ids(await searchIn(ana.api, 'พรุ่งนี้'))).toEqual([th.id]);
      expect(ids(await searchIn(ana.api, 'บ่ายสาม'))).toEqual([th.id]);
      expect(ids(await searchIn(ana.api, '회의'))).toEqual([ko.id]);
      expect(ids(await searchIn(ana.api, '手机'))).toEqual([mixed.id]);
      expect(ids(await searchIn(ana.api, 'iphone'))).toEqual([mixed.id]);
      expect(ids(await searchIn(ana.api, 'IPHONE手机'))).toEqual([mixed.id]);
      expect(ids(await searchIn(ana.api, '"会议" OR 회의'))).toEqual(expect.arrayContaining([zh.id, ko.id]));
      // one character: anywhere in a run, its last character included
      expect(sorted(ids(await searchIn(ana.api, '点')))).toEqual([zh.id]);
      expect(sorted(ids(await searchIn(ana.api, '明')))).toEqual(sorted([zh.id, ja.id]));
    });
  });

  describe('ranking and paging', () => {
    it('orders by relevance, then newest first, then id', async () => {
      const once = await send(ana, 'kiwi salad');
      const twice = await send(ana, 'kiwi and more kiwi');
      const laterOnce = await send(ana, 'kiwi juice');
      const page = await searchIn(ana.api, 'kiwi');
      expect(ids(page)).toEqual([twice.id, laterOnce.id, once.id]);
    });

    it('pages with cursor=next_cursor over the full order: every match once, the same order as one big page', async () => {
      const sent: string[] = [];
      for (let i = 0; i < 13; i++)
        sent.push(
          (await send(i % 2 ? ana : bo, i % 3 ? `guava number ${i}` : `guava guava number ${i} guava`)).id,
        );
      await send(ana, 'no match here');
      const all = await searchIn(ana.api, 'guava', { limit: 100 });
      expect(sorted(ids(all))).toEqual(sorted(sent));
      const pages: Page[] = [];
      let cursor: string | undefined;
      do {
        const p = await searchIn(ana.api, 'guava', { limit: 4, ...(cursor ? { cursor } : {}) });
        pages.push(p);
        expect(p.next_cursor === null).toBe(!p.has_more);
        cursor = p.next_cursor ?? undefined;
      } while (cursor && pages.length < 10);
      expect(pages.map((p) => p.messages.length)).toEqual([4, 4, 4, 1]);
      expect(pages.flatMap(ids)).toEqual(ids(all));
      // the cursor also works across channels
      const cross = await searchAll(ana.api, 'guava', { limit: 10 });
      const rest = await searchAll(ana.api, 'guava', { limit: 10, cursor: cross.next_cursor! });
      expect([...ids(cross), ...ids(rest)]).toEqual(ids(all));
    });

    it('limit is 1..100 and defaults to 50; a bad cursor is 400', async () => {
      for (let i = 0; i < 3; i++) await send(ana, `melon ${i}`);
      expect((await searchIn(ana.api, 'melon', { limit: 1 })).messages).toHaveLength(1);
      for (const limit of ['0', '101', 'abc', '1.5', '-1']) {
        expectError(
          await ana.api.get(`/v1/channels/${ch.id}/messages/search`).query({ q: 'melon', limit }),
          400,
          'VALIDATION_ERROR',
        );
      }
      const bad = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');
      for (const cursor of [
        'garbage',
        bad(['1e999', '2026-01-01T00:00:00.000000Z', ch.id]),
        bad(['0.1', '2026-02-31T00:00:00.000000Z', ch.id]),
        bad(['0.1', '2026-01-01T00:00:00.000000Z', 'x']),
        bad(['NaN', '2026-01-01T00:00:00.000000Z', ch.id]),
        bad([1, 2]),
      ]) {
        expectError(
          await ana.api.get(`/v1/channels/${ch.id}/messages/search`).query({ q: 'melon', cursor }),
          400,
          'VALIDATION_ERROR',
        );
      }
    });
  });

  describe('filters', () => {
    it('before and after take RFC 3339 times (400 otherwise) and combine', async () => {
      const m1 = await send(ana, 'plum one');
      await sleep(15);
      const m2 = await send(ana, 'plum two');
      await sleep(15);
      const m3 = await send(ana, 'plum three');
      expect(ids(await searchIn(ana.api, 'plum', { before: m2.created_at }))).toEqual([m1.id]);
      expect(sorted(ids(await searchIn(ana.api, 'plum', { after: m1.created_at })))).toEqual(
        sorted([m2.id, m3.id]),
      );
      expect(ids(await searchIn(ana.api, 'plum', { after: m1.created_at, before: m3.created_at }))).toEqual([
        m2.id,
      ]);
      // the same instant written with an offset
      const plusOne = new Date(Date.parse(m2.created_at) + 3600_000).toISOString().replace('Z', '+01:00');
      expect(ids(await searchAll(ana.api, 'plum', { before: plusOne }))).toEqual([m1.id]);
      expect(ids(await searchAll(ana.api, 'plum', { before: m2.created_at.replace('Z', '+00:00') }))).toEqual(
        [m1.id],
      );
      for (const bad of [
        'yesterday',
        '2026-02-31T00:00:00Z',
        '2026-01-01',
        '2026-01-01T25:00:00Z',
        '0000-01-01T00:00:00Z',
        '2026-01-01T00:00:00+24:00',
        '',
      ]) {
        expectError(
          await ana.api.get(`/v1/channels/${ch.id}/messages/search`).query({ q: 'plum', before: bad }),
          400,
          'VALIDATION_ERROR',
        );
        expectError(
          await ana.api.get('/v1/search/messages').query({ q: 'plum', after: bad }),
          400,
          'VALIDATION_ERROR',
        );
      }
    });

    it('user (author external id), type and has_attachment filter; unknown values of enums are 400', async () => {
      const byAna = await send(ana, 'maintenance tonight');
      const byBo = await send(bo, 'maintenance done');
      const sys = await ws.api.post('/v1/messages', {
        channel_id: ch.id,
        content: 'maintenance scheduled',
        system: true,
      });
      expect(sys.status).toBe(201);
      const img = await send(cy, 'maintenance photo', { attachment_url: `${t.baseUrl}/files/plan.png` });
      expect(sorted(ids(await searchIn(ana.api, 'maintenance')))).toEqual(
        sorted([byAna.id, byBo.id, sys.body.id as string, img.id]),
      );
      expect(ids(await searchIn(ana.api, 'maintenance', { user: 'bo' }))).toEqual([byBo.id]);
      expect(ids(await searchIn(ana.api, 'maintenance', { user: 'nobody' }))).toEqual([]);
      expect(ids(await searchIn(ana.api, 'maintenance', { type: 'system' }))).toEqual([sys.body.id]);
      expect(ids(await searchIn(ana.api, 'maintenance', { type: 'image' }))).toEqual([img.id]);
      expect(ids(await searchIn(ana.api, 'maintenance', { has_attachment: 'true' }))).toEqual([img.id]);
      expect(
        sorted(ids(await searchIn(ana.api, 'maintenance', { has_attachment: 'false', type: 'text' }))),
      ).toEqual(sorted([byAna.id, byBo.id]));
      expect(ids(await searchAll(ws.api, 'maintenance', { user: 'cy', has_attachment: 'true' }))).toEqual([
        img.id,
      ]);
      for (const query of [{ type: 'video' }, { has_attachment: 'yes' }, { user: '' }, { unknown: '1' }]) {
        expectError(
          await ana.api.get(`/v1/channels/${ch.id}/messages/search`).query({ q: 'maintenance', ...query }),
          400,
          'VALIDATION_ERROR',
        );
      }
    });
  });

  describe('highlights', () => {
    it('are [start, end) offsets of every matched word, phrase and run, in UTF-16 units', async () => {
      await send(ana, 'Fig jam with fig bread');
      await send(ana, '明天的会议在三点');
      await send(ana, '😀 Fig 🎉 emoji, fig!');
      await send(ana, 'the fig tree, a fig, TREE');
      const one = async (q: string, content: string) => {
        const hit = (await searchIn(ana.api, q)).messages.find((m) => m.content === content);
        if (!hit) throw new Error(`no hit for ${q} in ${content}`);
        return hit.highlights.map(([s, e]) => [s, e, content.slice(s, e)]);
      };
      expect(await one('fig', 'Fig jam with fig bread')).toEqual([
        [0, 3, 'Fig'],
        [13, 16, 'fig'],
      ]);
      expect(await one('会议', '明天的会议在三点')).toEqual([[3, 5, '会议']]);
      expect(await one('会议在', '明天的会议在三点')).toEqual([[3, 6, '会议在']]);
      expect(await one('明 点', '明天的会议在三点')).toEqual([
        [0, 1, '明'],
        [7, 8, '点'],
      ]);
      expect(await one('FIG', '😀 Fig 🎉 emoji, fig!')).toEqual([
        [3, 6, 'Fig'],
        [17, 20, 'fig'],
      ]);
      // punctuation between the words of a phrase does not matter, in matching or in highlights
      expect(await one('"fig tree"', 'the fig tree, a fig, TREE')).toEqual([
        [4, 12, 'fig tree'],
        [16, 25, 'fig, TREE'],
      ]);
      expect(await one('fig OR jam -bread', 'the fig tree, a fig, TREE')).toEqual([
        [4, 7, 'fig'],
        [16, 19, 'fig'],
      ]);
      expect(await one('"a fig" OR tree', 'the fig tree, a fig, TREE')).toEqual([
        [8, 12, 'tree'],
        [14, 19, 'a fig'],
        [21, 25, 'TREE'],
      ]);
    });
  });

  describe('who sees what', () => {
    it('never returns unsent messages; an edit re-indexes', async () => {
      const gone = await send(ana, 'durian secret');
      const kept = await send(ana, 'durian public');
      const edited = await send(ana, 'walnut original');
      expect((await ana.api.delete(`/v1/messages/${gone.id}`)).status).toBe(200);
      expect((await ana.api.patch(`/v1/messages/${edited.id}`, { content: 'pecan revised' })).status).toBe(
        200,
      );
      expect(ids(await searchIn(ana.api, 'durian'))).toEqual([kept.id]);
      expect(ids(await searchIn(ana.api, 'secret'))).toEqual([]);
      expect(ids(await searchAll(ws.api, 'secret'))).toEqual([]);
      expect(ids(await searchIn(ana.api, 'pecan'))).toEqual([edited.id]);
      expect(ids(await searchIn(ana.api, 'walnut'))).toEqual([]);
    });

    it("hides blocked users' messages from the blocker only, per channel and across channels", async () => {
      const fromBo = await send(bo, 'durian smell');
      const fromCy = await send(cy, 'durian taste');
      expect((await ana.api.post('/v1/me/blocks', { external_id: 'bo' })).status).toBe(201);
      expect(ids(await searchIn(ana.api, 'durian'))).toEqual([fromCy.id]);
      expect(ids(await searchAll(ana.api, 'durian'))).toEqual([fromCy.id]);
      expect(sorted(ids(await searchIn(cy.api, 'durian')))).toEqual(sorted([fromBo.id, fromCy.id]));
      expect(sorted(ids(await searchAll(ws.api, 'durian')))).toEqual(sorted([fromBo.id, fromCy.id]));
      expect((await ana.api.delete('/v1/me/blocks/bo')).status).toBe(204);
      expect(sorted(ids(await searchIn(ana.api, 'durian')))).toEqual(sorted([fromBo.id, fromCy.id]));
    });

    it('a user searches only channels they belong to: 403 NOT_A_MEMBER per channel, nothing from them across channels', async () => {
      const dan = await ws.user('dan');
      const inMain = await send(ana, 'confidential figures');
      const other = await group(['dan'], 'cy');
      const inOther = await send(dan, 'confidential memo', {}, other);
      const res = await dan.api.get(`/v1/channels/${ch.id}/messages/search`).query({ q: 'confidential' });
      expectError(res, 403, 'NOT_A_MEMBER');
      expect(res.text).not.toContain('figures');
      expect(ids(await searchAll(dan.api, 'confidential'))).toEqual([inOther.id]);
      expect(ids(await searchAll(ana.api, 'confidential'))).toEqual([inMain.id]);
      expect(sorted(ids(await searchAll(cy.api, 'confidential')))).toEqual(sorted([inMain.id, inOther.id]));
      // the backend key searches every channel of its workspace
      expect(ids(await searchIn(ws.api, 'confidential', {}, other.id))).toEqual([inOther.id]);
      expect(sorted(ids(await searchAll(ws.api, 'confidential')))).toEqual(sorted([inMain.id, inOther.id]));
      // a user in no channel at all
      expect(ids(await searchAll((await ws.user('eve')).api, 'confidential'))).toEqual([]);
    });

    it('another workspace: its channel is 404, its messages are never found', async () => {
      await send(ana, 'quince report');
      const other = await newWorkspace(t);
      const zed = await other.user('zed');
      const theirs = await other.api.post('/v1/channels', {
        type: 'group',
        external_id: 'theirs',
        created_by: 'zed',
        member_external_ids: [],
      });
      await zed.api.post(`/v1/channels/${theirs.body.id}/messages`, { content: 'quince elsewhere' });
      expectError(
        await ana.api.get(`/v1/channels/${theirs.body.id}/messages/search`).query({ q: 'quince' }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await ws.api.get(`/v1/channels/${theirs.body.id}/messages/search`).query({ q: 'quince' }),
        404,
        'NOT_FOUND',
      );
      expect((await searchAll(ws.api, 'quince')).messages.map((m) => m.content)).toEqual(['quince report']);
      expect((await searchAll(other.api, 'quince')).messages.map((m) => m.content)).toEqual([
        'quince elsewhere',
      ]);
    });

    it('needs credentials', async () => {
      expect((await t.http().get('/v1/search/messages').query({ q: 'x' })).status).toBe(401);
    });
  });

  describe('any input is safe: 200 or 400, never 500', () => {
    it('answers hostile queries', async () => {
      const m = await send(ana, "it's O'Brien's \\ back-slash: 100% done; DROP TABLE messages; --");
      const hostile = [
        '"unbalanced quote',
        'unbalanced" quote',
        '-',
        '--',
        '- -',
        '"',
        '""',
        '"-"',
        '-"',
        'OR',
        'OR OR OR',
        '!@#$%^&*()_+-=[]{}|;:\'",.<>/?`~'.repeat(8).slice(0, 256),
        '&|!<->:*()',
        "'; DROP TABLE messages; --",
        "' OR 1=1 --",
        '\\',
        "O'Brien",
        'a'.repeat(256),
        '会'.repeat(256),
        '😀'.repeat(128),
        'x\u0000y',
        '\u0000',
        '\uD800 lone surrogate',
        'e\u0301cole',
        ' \t\n ',
        '%',
        '100%',
        '100% done',
        'back-slash',
        '(a OR b) AND NOT c',
      ];
      for (const q of hostile) {
        for (const path of [`/v1/channels/${ch.id}/messages/search`, '/v1/search/messages']) {
          const res = await ana.api.get(path).query({ q });
          if (res.status !== 200 && res.status !== 400)
            throw new Error(`${JSON.stringify(q)} on ${path}: ${res.status} ${res.text}`);
          if (res.status === 400) expectError(res, 400, 'VALIDATION_ERROR');
        }
      }
      expect(ids(await searchIn(ana.api, "O'Brien"))).toEqual([m.id]);
      expect(ids(await searchIn(ana.api, "'; DROP TABLE messages; --"))).toEqual([m.id]);
      expect(ids(await searchIn(ana.api, '100%'))).toEqual([m.id]);
      expect(ids(await searchIn(ana.api, '&|!<->:*()'))).toEqual([]);
      expect(
        (await ana.api.get('/v1/search/messages').query({ q: 'x', user: 'a\u0000b' })).status,
      ).toBeLessThan(500);
    });

    it('q is required, 1..256 characters', async () => {
      const base = `/v1/channels/${ch.id}/messages/search`;
      expectError(await ana.api.get(base), 400, 'VALIDATION_ERROR');
      expectError(await ana.api.get(base).query({ q: '' }), 400, 'VALIDATION_ERROR');
      expectError(await ana.api.get(base).query({ q: 'a'.repeat(257) }), 400, 'VALIDATION_ERROR');
      expectError(await ana.api.get(base).query('q=a&q=b'), 400, 'VALIDATION_ERROR');
      expectError(await ana.api.get('/v1/search/messages'), 400, 'VALIDATION_ERROR');
      expect((await ana.api.get(base).query({ q: 'a'.repeat(256), limit: 100 })).status).toBe(200);
    });
  });

  describe('query plans', () => {
    // The repository's own SQL, explained. On a test-sized table a sequential scan is rightly
    // cheapest, so plain scans are priced out: what this guards is that every query shape can use the
    // message_search_doc index for a rare word, rather than scanning the channel, and reads the
    // not yet indexed messages through an index of the log (docs/SEARCH.md keeps the plans the
    // planner chooses on a million messages).
    it('can find a rare word through the message_search_doc index in every scope', async () => {
      const db = t.app.get(DataSource);
      await db.query(
        `INSERT INTO messages (id, workspace_id, channel_id, user_id, sender_key, type, content, created_at)
         SELECT gen_random_uuid(), $1, $2, $3::uuid, $3::text, 'text', 'filler words number ' || i || CASE WHEN i % 1000 = 0 THEN ' rareword' ELSE '' END,
                now() - i * interval '1 second'
           FROM generate_series(1, 3000) AS i`,
        [ws.id, ch.id, ana.id],
      );
      // written directly, not sent: their documents as the indexer writes them
      await db.query(
        `INSERT INTO message_search (message_id, channel_id, doc)
         SELECT id, channel_id, chat_search_doc(content, channel_id) FROM messages WHERE channel_id = $1
         ON CONFLICT (message_id) DO NOTHING`,
        [ch.id],
      );
      await db.query('ANALYZE messages, message_search, events');
      const repo = new SearchRepository();
      const plans: string[] = [];
      await db.transaction(async (m) => {
        await m.query('SET LOCAL enable_seqscan = off');
        await m.query('SET LOCAL enable_indexscan = off');
        const explain = {
          query: async (sql: string, params: unknown[]) => {
            const rows: { 'QUERY PLAN': string }[] = await m.query(`EXPLAIN ${sql}`, params);
            plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
            return [];
          },
        } as unknown as EntityManager;
        const base = {
          workspaceId: ws.id,
          tsquery: "'rareword'",
          filters: {},
          hiddenUserIds: [],
          take: 51,
          exact: ['rareword'],
          prefixes: [],
        };
        await repo.page(explain, { ...base, scope: { kind: 'channel', channelId: ch.id } });
        await repo.page(explain, {
          ...base,
          scope: { kind: 'channels', channelIds: [ch.id] },
          hiddenUserIds: [bo.id],
        });
        await repo.page(explain, { ...base, scope: { kind: 'workspace' } });
      });
      expect(plans).toHaveLength(3);
      for (const plan of plans) expect(plan).toMatch(/Bitmap Index Scan on message_search_doc\b/);
      // the log after the indexer's cursor: a range of one of the (…, tx_id, position) indexes
      for (const plan of plans) expect(plan).toMatch(/Index Scan[^\n]* on events_(workspace|tx)_order\b/);
      for (const plan of plans) expect(plan).not.toMatch(/on events_(channel_seq|created_at|pkey|id_key)\b/);
      for (const plan of plans) expect(plan).not.toMatch(/Seq Scan on (messages|message_search|events)\b/);
      for (const plan of plans) expect(plan).not.toMatch(/messages_channel_time/);
      expect(ids(await searchIn(ana.api, 'rareword'))).toHaveLength(3);
    });
  });
});
