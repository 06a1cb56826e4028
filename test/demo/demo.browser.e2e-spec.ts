/**
 * The demo app at /demo in a real browser (Debian's Chromium through playwright-core): two browser
 * contexts are two users of the development sign-in. They chat in real time, see each other typing and
 * their read ticks, unread and mention counts, upload an image and see it, search it, react, reply,
 * edit, unsend and answer in a thread (its unread marks), keep a draft across a reload and a second
 * browser, link previews, reminders and scheduled messages; one goes offline and, back online, sees
 * what it missed, once.
 * Every assertion is on what the page shows. UPDATE_SCREENSHOTS=1 saves the main screen (desktop and
 * phone width) to docs/images/ for the README.
 */
import { mkdtempSync } from 'fs';
import http from 'http';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { deflateSync, crc32 } from 'zlib';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { io } from 'socket.io-client';
import { startTestApp, TestApp } from '../support/app';
import { describeInBrowser, launchChromium } from '../support/browser';
import { Client } from '../support/fixtures';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildDemo } = require('../../scripts/build-demo.js') as { buildDemo: () => Promise<unknown> };

/** Booting the app on PGlite, bundling the demo and launching Chromium, generously: a loaded 2-core machine is slow. */
const BOOT_TIMEOUT_MS = 300_000;
/** How long the page may take to show something: realtime, a catch-up, a reconnect. Not a speed claim. */
const SEEN_MS = 20_000;
const API_KEY = 'pk_demo_browser_test';
const API_SECRET = 'sk_demo_browser_test_0123456789';
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? join(__dirname, '..', '..', 'docs', 'images')
  : mkdtempSync(join(tmpdir(), 'demo-shots-'));

/** A real PNG (a 96×64 gradient): the page must decode and show it. */
function png(width = 96, height = 64): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) row.set([255 - y * 2, 120 + x, 60 + y], 1 + x * 3);
    rows.push(row);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

jest.setTimeout(240_000);

interface User {
  context: BrowserContext;
  page: Page;
  errors: string[];
}

describeInBrowser(__filename)('demo app in Chromium: two users chat', () => {
  let t: TestApp;
  let browser: Browser;
  let backend: Client;
  let ana: User;
  let bo: User;

  beforeAll(async () => {
    await buildDemo();
    t = await startTestApp({
      SERVICE_BOOTSTRAP_API_KEY: API_KEY,
      SERVICE_BOOTSTRAP_API_SECRET: API_SECRET,
      // the default on the embedded database; the integration run (DATABASE_URL) turns it on explicitly
      SERVICE_DEMO: 'true',
    });
    backend = new Client(t, `Bearer ${API_KEY}:${API_SECRET}`);
    browser = await launchChromium();
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Opens /demo in a fresh context and signs in with the keyboard only. */
  async function signIn(
    userId: string,
    name: string,
    viewport = { width: 1280, height: 800 },
  ): Promise<User> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${t.baseUrl}/demo/`);
    await expectVisible(page.getByRole('heading', { name: 'Development sign-in' }));
    await expectVisible(page.getByRole('heading', { name: 'Sign in with a user token' }));
    await eventually(
      () => focusedId(page),
      (id) => expect(id).toBe('signin-user'),
    );
    await page.keyboard.type(userId);
    await page.keyboard.press('Tab');
    await page.keyboard.type(name);
    await page.keyboard.press('Enter');
    await expectVisible(page.getByRole('status').filter({ hasText: 'Online' }));
    // a phone shows the channel list first; a wider screen the first channel too
    await expectVisible(page.getByRole('heading', { name: viewport.width > 760 ? '#General' : 'Channels' }));
    return { context, page, errors };
  }

  const composer = (u: User) => u.page.getByLabel('Message', { exact: true });
  /** A message of the conversation (not of a thread panel), by its own text (not a quote of it). */
  const message = (u: User, text: string | RegExp) =>
    u.page
      .getByRole('main')
      .locator('.messages > .msg')
      .filter({ has: u.page.locator('p.content', { hasText: text }) });

  async function send(u: User, text: string): Promise<void> {
    await composer(u).focus();
    await u.page.keyboard.type(text);
    await u.page.keyboard.press('Enter');
  }

  it('signs two users in and they exchange messages in real time, with typing and read ticks', async () => {
    ana = await signIn('ana', 'Ana');
    bo = await signIn('bo', 'Bo');
    // ana's page learns of bo (member.added, presence) without a reload
    await expectVisible(ana.page.getByRole('list', { name: 'Members' }).getByText('bo'));

    await send(ana, 'Hello Bo!');
    await expectVisible(message(bo, 'Hello Bo!'));
    await eventually(
      () => composer(ana).inputValue(),
      (v) => expect(v).toBe(''),
    );

    // bo types: ana sees it, and sees it end when bo sends
    await composer(bo).focus();
    await bo.page.keyboard.type('Hi Ana, good to');
    await expectVisible(ana.page.getByText('bo is typing…'));
    await bo.page.keyboard.type(' see you');
    await bo.page.keyboard.press('Enter');
    await expectVisible(message(ana, 'Hi Ana, good to see you'));
    await expectVisible(ana.page.locator('.typing:empty'));

    // bo has the channel open: ana's message turns to read
    await expectVisible(message(ana, 'Hello Bo!').getByRole('img', { name: 'Read' }));
    // once each, whichever came first, the socket's event or the send's answer
    expect(await message(ana, 'Hello Bo!').count()).toBe(1);
    expect(await message(bo, 'Hello Bo!').count()).toBe(1);
  });

  it('shows unread and mention counts in the channel list, marks a channel unread from a message, and mentions autocomplete from the members', async () => {
    const created = await backend.post('/v1/channels', {
      type: 'group',
      external_id: 'random',
      name: 'Random',
      created_by: 'bo',
      member_external_ids: ['ana'],
    });
    expect(created.status).toBe(201);
    const random = (u: User) => u.page.locator('.channels [data-channel="random"]');
    await expectVisible(random(bo));
    await random(bo).click();
    await expectVisible(bo.page.getByRole('heading', { name: '#Random' }));

    await composer(bo).focus();
    await bo.page.keyboard.type('Lunch? @a');
    await expectVisible(bo.page.getByRole('option', { name: '@ana' }));
    await bo.page.keyboard.press('Tab');
    await eventually(
      () => composer(bo).inputValue(),
      (v) => expect(v).toBe('Lunch? @ana '),
    );
    await bo.page.keyboard.type('at noon');
    await bo.page.keyboard.press('Enter');
    await send(bo, 'Or later');

    // ana is still in #General: #Random counts two unread, one mentioning her
    await eventually(
      () => random(ana).getAttribute('aria-label'),
      (v) => expect(v).toBe('#Random, 2 unread, 1 mentioning you'),
    );
    await eventually(
      () => random(ana).locator('.unread-count').textContent(),
      (v) => expect(v).toBe('2'),
    );
    await eventually(
      () => random(ana).locator('.mention-count').textContent(),
      (v) => expect(v).toBe('@1'),
    );
    await random(ana).click();
    await expectVisible(message(ana, 'Lunch? @ana at noon').locator('.mention.me', { hasText: '@ana' }));
    await eventually(
      () => random(ana).getAttribute('aria-label'),
      (v) => expect(v).toBe('#Random'),
    );

    // ana marks bo's first message unread: both count again, though #Random stays open
    const lunch = message(ana, 'Lunch? @ana at noon');
    await lunch.focus();
    await lunch.getByRole('button', { name: 'Mark unread' }).click();
    await eventually(
      () => random(ana).getAttribute('aria-label'),
      (v) => expect(v).toBe('#Random, 2 unread, 1 mentioning you'),
    );
    // bo's own messages offer no such action
    await message(bo, 'Or later').focus();
    await expectVisible(message(bo, 'Or later').getByRole('button', { name: 'Edit' }));
    expect(await message(bo, 'Or later').getByRole('button', { name: 'Mark unread' }).count()).toBe(0);
    // opening it again reads it
    await random(ana).click();
    await eventually(
      () => random(ana).getAttribute('aria-label'),
      (v) => expect(v).toBe('#Random'),
    );
    await ana.page.locator('.channels [data-channel="general"]').click();
    await bo.page.locator('.channels [data-channel="general"]').click();
  });

  it('pages back through history as the reader scrolls up', async () => {
    const created = await backend.post('/v1/channels', {
      type: 'group',
      external_id: 'history',
      name: 'History',
      created_by: 'ana',
    });
    expect(created.status).toBe(201);
    // system messages: no sender's rate limit to mind; 35 of them, more than one page (30)
    for (let i = 1; i <= 35; i++) {
      const sent = await backend.post('/v1/messages', {
        channel_id: 'history',
        system: true,
        content: `History line ${i}`,
      });
      expect(sent.status).toBe(201);
    }
    const history = ana.page.locator('.channels [data-channel="history"]');
    await expectVisible(history);
    await history.click();
    await expectVisible(message(ana, /^History line 35$/));
    await eventually(
      () => message(ana, /^History line 1$/).count(),
      (n) => expect(n).toBe(0),
    );
    await ana.page.getByRole('log', { name: 'Messages' }).evaluate((el) => el.scrollTo(0, 0));
    await expectVisible(message(ana, /^History line 1$/));
    await eventually(
      () => ana.page.getByRole('main').locator('.messages > .msg').count(),
      (n) => expect(n).toBe(35),
    );
    await ana.page.locator('.channels [data-channel="general"]').click();

    // what ana read stays read: after a reload (the tab keeps its session) the service counts nothing unread
    await ana.page.reload();
    await expectVisible(ana.page.getByRole('status').filter({ hasText: 'Online' }));
    for (const [channel, label] of [
      ['history', '#History'],
      ['random', '#Random'],
    ]) {
      await eventually(
        () => ana.page.locator(`.channels [data-channel="${channel}"]`).getAttribute('aria-label'),
        (v) => expect(v).toBe(label),
      );
    }
    await ana.page.locator('.channels [data-channel="general"]').click();
    await expectVisible(ana.page.getByRole('heading', { name: '#General' }));
  });

  it('uploads an image that the other user sees, and both find it by search with highlights', async () => {
    await ana.page
      .locator('#file-channel')
      .setInputFiles({ name: 'sunset.png', mimeType: 'image/png', buffer: png() });
    await expectVisible(ana.page.getByText('Attached: sunset.png'));
    await send(ana, 'The sunset over the bay');

    const image = message(bo, 'The sunset over the bay').getByRole('img', { name: 'sunset.png' });
    await expectVisible(image);
    // the file came back from the service's storage and decoded
    await eventually(
      () => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      (w) => expect(w).toBe(96),
    );

    await bo.page.getByRole('searchbox', { name: 'Search messages' }).fill('sunset');
    await bo.page.getByRole('searchbox', { name: 'Search messages' }).press('Enter');
    const results = bo.page.getByRole('list', { name: 'Results for sunset' });
    await expectVisible(results.locator('mark', { hasText: 'sunset' }));
    await eventually(
      () => results.locator('.hit').count(),
      (n) => expect(n).toBe(1),
    );
    await eventually(
      () => results.locator('.hit .content').textContent(),
      (v) => expect(v).toBe('The sunset over the bay'),
    );
    await expectVisible(results.getByRole('img', { name: 'sunset.png' }));
    await bo.page.getByRole('button', { name: 'Close' }).click();
  });

  it('reacts, replies with a quote, edits, unsends and answers in a thread', async () => {
    const hello = message(bo, 'Hello Bo!');
    await hello.focus();
    await hello.getByRole('button', { name: 'React with 👍' }).click();
    await expectVisible(message(ana, 'Hello Bo!').getByRole('button', { name: '👍 1' }));

    await hello.getByRole('button', { name: 'Reply' }).click();
    await expectVisible(bo.page.getByText('Replying to Ana:'));
    await bo.page.keyboard.type('Quoting you');
    await bo.page.keyboard.press('Enter');
    await expectVisible(message(ana, 'Quoting you').locator('blockquote', { hasText: 'Hello Bo!' }));

    await send(ana, 'Typo hree');
    const typo = message(ana, 'Typo hree');
    await typo.focus();
    await typo.getByRole('button', { name: 'Edit' }).click();
    await ana.page.getByLabel('Edit message').fill('Typo here');
    await ana.page.getByLabel('Edit message').press('Enter');
    await expectVisible(message(bo, 'Typo here').getByText('(edited)'));
    const fixed = message(ana, 'Typo here');
    await fixed.focus();
    await fixed.getByRole('button', { name: 'Unsend' }).click();
    await eventually(
      () => message(bo, 'Typo here').count(),
      (n) => expect(n).toBe(0),
    );
    await expectVisible(bo.page.getByText('This message was unsent'));

    const thread = message(ana, 'Hi Ana, good to see you');
    await thread.focus();
    await thread.getByRole('button', { name: 'Thread' }).click();
    await eventually(
      () => focusedId(ana.page),
      (id) => expect(id).toBe('composer-thread'),
    );
    await ana.page.keyboard.type('Replying in the thread');
    await ana.page.keyboard.press('Enter');
    await expectVisible(message(bo, 'Hi Ana, good to see you').getByRole('button', { name: '1 reply' }));
    // bo wrote the root: the reply is new to him, on the message and in the channel list
    await expectVisible(
      message(bo, 'Hi Ana, good to see you').locator('.thread-unread', { hasText: '1 new' }),
    );
    await expectVisible(bo.page.getByRole('button', { name: /^#General.*1 thread with new replies/ }));
    await message(bo, 'Hi Ana, good to see you').getByRole('button', { name: '1 reply' }).click();
    await expectVisible(bo.page.getByRole('list', { name: 'Replies' }).getByText('Replying in the thread'));
    // open on screen, the thread is read: both marks go
    await eventually(
      () => message(bo, 'Hi Ana, good to see you').locator('.thread-unread').count(),
      (n) => expect(n).toBe(0),
    );
    await eventually(
      () => bo.page.locator('.thread-count').count(),
      (n) => expect(n).toBe(0),
    );
    // a thread reply stays out of the channel's history
    await eventually(
      () => message(bo, 'Replying in the thread').count(),
      (n) => expect(n).toBe(0),
    );
    await bo.page.getByRole('button', { name: 'Close' }).click();
  });

  it('keeps an unsent draft across a reload and shows it on the user’s other browser, until it is sent', async () => {
    await composer(ana).focus();
    await ana.page.keyboard.type('Half a thought about lunch');
    // saved once the typing rests: the channel list marks the draft
    await expectVisible(ana.page.locator('.channels .draft-mark'));
    await ana.page.reload();
    await expectVisible(ana.page.getByRole('status').filter({ hasText: 'Online' }));
    await eventually(
      () => composer(ana).inputValue(),
      (v) => expect(v).toBe('Half a thought about lunch'),
    );
    // ana's second browser
    const other = await signIn('ana', 'Ana');
    await eventually(
      () => composer(other).inputValue(),
      (v) => expect(v).toBe('Half a thought about lunch'),
    );
    await expectVisible(other.page.locator('.channels .draft-mark'));
    // finished and sent there: the draft leaves the first browser too
    await composer(other).focus();
    await other.page.keyboard.press('End');
    await other.page.keyboard.type(', at noon?');
    await other.page.keyboard.press('Enter');
    await expectVisible(message(bo, 'Half a thought about lunch, at noon?'));
    await eventually(
      () => composer(ana).inputValue(),
      (v) => expect(v).toBe(''),
    );
    await eventually(
      () => ana.page.locator('.channels .draft-mark').count(),
      (n) => expect(n).toBe(0),
    );
    expect(other.errors).toEqual([]);
    await other.context.close();
  });

  it('sets a reminder on a message, which comes due on the user’s other browser too, and lists it as due', async () => {
    await send(ana, 'Remember the budget review');
    const msg = message(bo, 'Remember the budget review');
    await expectVisible(msg);
    const other = await signIn('bo', 'Bo'); // bo's second browser, open on the same channel
    await msg.getByRole('button', { name: 'Remind me' }).click();
    await expectVisible(bo.page.getByRole('heading', { name: 'Remind me' }));
    // a few seconds ahead, in the browser's own zone, as the datetime-local input takes it
    const at = await bo.page.evaluate(() => {
      const t = new Date(Date.now() + 4000);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}T${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
    });
    await bo.page.getByLabel('Remind me at').fill(at);
    await bo.page.getByRole('button', { name: 'Set reminder' }).click();
    await expectVisible(bo.page.getByRole('status').filter({ hasText: 'Reminder set for' }));
    for (const u of [bo, other]) {
      const toast = u.page.getByRole('alert').filter({ hasText: 'Reminder:' });
      await expectVisible(toast);
      expect(await toast.textContent()).toContain('Remember the budget review');
      await expectVisible(u.page.getByRole('button', { name: 'Reminders (1 due)' }));
    }
    await bo.page.getByRole('button', { name: 'Reminders (1 due)' }).click();
    const item = bo.page.locator('.reminders .reminder.due');
    await expectVisible(item);
    expect(await item.textContent()).toContain('Remember the budget review');
    // ana, whose message it is, was told nothing
    expect(await ana.page.getByRole('alert').filter({ hasText: 'Reminder:' }).count()).toBe(0);
    await item.getByRole('button', { name: 'Delete' }).click();
    await expectVisible(bo.page.getByText('No reminders.'));
    await bo.page.getByRole('button', { name: 'Close' }).click();
    expect(other.errors).toEqual([]);
    await other.context.close();
  });

  it('shows the preview of a link in a message once the service found it', async () => {
    const site = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<html><head><meta property="og:title" content="Quarterly numbers">' +
          '<meta property="og:description" content="All of them, in one place"><meta property="og:site_name" content="Finance wiki"></head></html>',
      );
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/q3`;
      await send(ana, `The numbers: ${url}`);
      for (const u of [ana, bo]) {
        const card = message(u, 'The numbers:').getByRole('link', { name: /Quarterly numbers/ });
        await expectVisible(card);
        expect(await card.getAttribute('href')).toBe(url);
        expect(await card.textContent()).toBe('Finance wikiQuarterly numbersAll of them, in one place');
      }
    } finally {
      site.closeAllConnections();
      await new Promise((r) => site.close(r));
    }
  });

  it('posts a poll that the other user votes in, both see the counts, and its creator closes it', async () => {
    await ana.page.getByRole('button', { name: 'New poll' }).click();
    await ana.page.getByLabel('Question').fill('Lunch where?');
    await ana.page.getByLabel('Options, one per line').fill('Pizza place\nNoodle bar\n');
    await ana.page.getByRole('button', { name: 'Post poll' }).click();
    const poll = (u: User) => u.page.getByRole('group', { name: 'Poll: Lunch where?' });
    await expectVisible(poll(bo));
    await poll(bo).getByRole('button', { name: 'Noodle bar: 0 votes' }).click();
    const chosen = poll(bo).getByRole('button', { name: 'Noodle bar: 1 vote' });
    await expectVisible(chosen);
    expect(await chosen.getAttribute('aria-pressed')).toBe('true');
    // ana sees the count from the broadcast, not as her own choice
    const seen = poll(ana).getByRole('button', { name: 'Noodle bar: 1 vote' });
    await expectVisible(seen);
    expect(await seen.getAttribute('aria-pressed')).toBe('false');
    // choosing the other option replaces bo's vote
    await poll(bo).getByRole('button', { name: 'Pizza place: 0 votes' }).click();
    await expectVisible(poll(ana).getByRole('button', { name: 'Pizza place: 1 vote' }));
    await expectVisible(poll(ana).getByRole('button', { name: 'Noodle bar: 0 votes' }));
    await poll(ana).getByRole('button', { name: 'Close poll' }).click();
    await expectVisible(poll(bo).getByText('1 voter · Closed'));
    expect(await poll(bo).getByRole('button', { name: 'Pizza place: 1 vote' }).isDisabled()).toBe(true);
  });

  it('schedules a message that nobody sees until its time, then everyone does; a cancelled one never comes', async () => {
    await bo.page.getByRole('button', { name: 'Send later' }).click();
    await expectVisible(bo.page.getByRole('heading', { name: 'Send later' }));
    const inBrowserZone = (ms: number) =>
      bo.page.evaluate((ahead) => {
        const t = new Date(Date.now() + ahead);
        const p = (n: number) => String(n).padStart(2, '0');
        return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}T${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
      }, ms);
    const schedule = async (text: string, ms: number) => {
      await bo.page.locator('#schedule-content').fill(text);
      await bo.page.getByLabel('Send at').fill(await inBrowserZone(ms));
      await bo.page.getByRole('button', { name: 'Schedule' }).click();
      await expectVisible(bo.page.locator('.scheduled .scheduled-message').filter({ hasText: text }));
    };
    await schedule('Never mind this one', 3600_000);
    await schedule('See you at standup', 5000);
    const cancelled = bo.page
      .locator('.scheduled .scheduled-message')
      .filter({ hasText: 'Never mind this one' });
    await cancelled.getByRole('button', { name: 'Cancel' }).click();
    await eventually(
      () => cancelled.count(),
      (n) => expect(n).toBe(0),
    );
    expect(await message(ana, 'See you at standup').count()).toBe(0);
    await expectVisible(message(ana, 'See you at standup'));
    await expectVisible(message(bo, 'See you at standup'));
    const toast = bo.page.getByRole('alert').filter({ hasText: 'Sent:' });
    await expectVisible(toast);
    expect(await toast.textContent()).toContain('See you at standup');
    await expectVisible(bo.page.getByText('Nothing scheduled.'));
    expect(await message(ana, 'Never mind this one').count()).toBe(0);
    await bo.page.getByRole('button', { name: 'Close' }).click();
  });

  it('goes offline, and back online sees what it missed, once', async () => {
    await bo.context.setOffline(true);
    await expectVisible(bo.page.getByRole('status').filter({ hasText: 'Offline' }));
    await send(ana, 'Sent while Bo was away');
    await send(ana, 'And another one');
    await expectVisible(message(ana, 'And another one').getByRole('img', { name: /Sent|Delivered|Read/ }));
    await eventually(
      () => message(bo, 'Sent while Bo was away').count(),
      (n) => expect(n).toBe(0),
    );

    // bo's own send shows at once, fails once its retries run out, and can be retried by hand
    await send(bo, 'Written on the train');
    await expectVisible(message(bo, 'Written on the train').getByText(/^Not sent/));
    await expectVisible(message(bo, 'Written on the train').getByRole('button', { name: 'Retry' }));

    await bo.context.setOffline(false);
    await expectVisible(bo.page.getByRole('status').filter({ hasText: 'Online' }));
    await message(bo, 'Written on the train').getByRole('button', { name: 'Retry' }).click();
    await expectVisible(message(ana, 'Written on the train'));
    await expectVisible(message(bo, 'Written on the train').getByRole('img', { name: /Delivered|Read/ }));
    await expectVisible(message(bo, 'And another one'));
    for (const text of ['Sent while Bo was away', 'And another one', 'Hello Bo!', 'Written on the train'])
      await eventually(
        () => message(bo, text).count(),
        (n) => expect(n).toBe(1),
      );
    // and, reading them, turns ana's ticks to read
    await expectVisible(message(ana, 'And another one').getByRole('img', { name: 'Read' }));
    expect([...ana.errors, ...bo.errors]).toEqual([]);
  });

  it("shows a large channel's members online through a presence subscription", async () => {
    // above two members a channel is large: presence does not flow through it, the page subscribes
    expect((await backend.patch('/v1/workspace/settings', { large_channel_threshold: 2 })).status).toBe(200);
    try {
      expect((await backend.put('/v1/users/dee', { name: 'Dee' })).status).toBeLessThan(300);
      const created = await backend.post('/v1/channels', {
        type: 'group',
        external_id: 'crowd',
        name: 'Crowd',
        created_by: 'ana',
        member_external_ids: ['bo', 'dee'],
      });
      expect(created.status).toBe(201);
      const crowd = ana.page.locator('.channels [data-channel="crowd"]');
      await expectVisible(crowd);
      await crowd.click();
      await expectVisible(ana.page.getByRole('heading', { name: '#Crowd' }));
      const dee = ana.page.getByRole('list', { name: 'Members' }).locator('[data-member="dee"]');
      await expectVisible(dee.getByRole('img', { name: 'offline' }));
      // dee shares only this large channel with ana: her coming online reaches ana by subscription
      const token = (await backend.post('/v1/users/dee/token', {})).body.token as string;
      const socket = io(t.baseUrl, { transports: ['websocket'], auth: { token }, reconnection: false });
      try {
        await expectVisible(dee.getByRole('img', { name: 'online' }));
      } finally {
        socket.close();
      }
      await expectVisible(dee.getByRole('img', { name: 'offline' }));
      await ana.page.locator('.channels [data-channel="general"]').click();
      expect(ana.errors).toEqual([]);
    } finally {
      await backend.patch('/v1/workspace/settings', { large_channel_threshold: 100 });
    }
  });

  it('lays out the main screen on a desktop and on a phone (screenshots)', async () => {
    await composer(bo).focus();
    await bo.page.keyboard.type('Back now');
    await expectVisible(ana.page.getByText('bo is typing…'));
    await ana.page.mouse.move(0, 0); // no hover actions in the picture
    await ana.page.screenshot({ path: join(SCREENSHOTS, 'demo-desktop.png') });
    await bo.page.keyboard.press('Enter');

    const phone = await signIn('cy', 'Cy', { width: 390, height: 844 });
    // a phone shows the channel list first, then the conversation alone, with a way back
    await expectVisible(phone.page.getByRole('heading', { name: 'Channels' }));
    await eventually(
      () => phone.page.getByRole('main').isVisible(),
      (v) => expect(v).toBe(false),
    );
    await phone.page.locator('.channels [data-channel="general"]').click();
    await expectVisible(message(phone, 'Back now'));
    await eventually(
      () => phone.page.getByRole('navigation').isVisible(),
      (v) => expect(v).toBe(false),
    );
    const width = await phone.page.evaluate(
      () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
    );
    expect(width).toBeLessThanOrEqual(390); // nothing wider than the screen
    await phone.page.mouse.move(0, 0);
    await phone.page.screenshot({ path: join(SCREENSHOTS, 'demo-phone.png') });
    await phone.page.getByRole('button', { name: 'Channels' }).click();
    await expectVisible(phone.page.getByRole('navigation'));
    expect(phone.errors).toEqual([]);
  });
});

/** The page's globals the test reads (the test is compiled without the DOM library). */
interface PageGlobals {
  document: { activeElement: { id: string } | null; documentElement: { scrollWidth: number } };
}

function focusedId(page: Page): Promise<string | undefined> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.id);
}

/** Reads until the check passes (the page settles in its own time), else fails with the last reading. */
async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => void,
  timeoutMs = SEEN_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    try {
      check(value);
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits for the locator's first match to be visible. */
async function expectVisible(locator: ReturnType<Page['locator']>): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: SEEN_MS });
}
