import { request } from 'http';
import { connect } from 'net';
import { gzipSync } from 'zlib';
import { room } from '../messages/helpers';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { closeAllSockets, connectSocket } from '../support/socket';

/** Issue 11, finding 4: input no route can use is refused at the edge with 400, never answered with 500. */
describe('input hygiene at the edge', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    closeAllSockets();
    await t.close();
  });

  it('refuses NUL bytes and unpaired surrogates in bodies, keys, queries and paths with 400, storing nothing', async () => {
    const { ws, ch, bo } = await room(t);
    const path = `/v1/channels/${ch.id}/messages`;
    for (const content of ['a\u0000b', 'lone \uD83D high', 'lone \uDE00 low']) {
      const res = await bo.api.post(path, { content });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([{ field: 'content', message: expect.stringContaining('NUL') }]);
    }
    expectError(
      await ws.api.put('/v1/users/zed', { name: 'Zed', metadata: { 'k\u0000': 1 } }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(await bo.api.get(`/v1/channels/${ch.id}/messages/search?q=%00`), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/users/a%00b'), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/users/%ED%A0%80'), 400, 'VALIDATION_ERROR');
    expectError(await ws.api.get('/v1/users/%E0%A4%A'), 400, 'VALIDATION_ERROR');
    // a pair is fine, and so is everything else
    expect((await bo.api.post(path, { content: 'emoji 😀 ok' })).status).toBe(201);
    const history = await bo.api.get(path);
    expect(history.body.messages.map((m: { content: string }) => m.content)).toEqual(['emoji 😀 ok']);
  });

  it('refuses JSON nested deeper than 32 levels with 400', async () => {
    const { bo, ch } = await room(t);
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const res = await bo.api
      .req('post', `/v1/channels/${ch.id}/messages`)
      .set('Content-Type', 'application/json')
      .send(`{"content":"x","metadata":{"a":${deep}}}`);
    expectError(res, 400, 'VALIDATION_ERROR');
    const nested = { content: 'x', metadata: { a: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) } };
    expectError(await bo.api.post(`/v1/channels/${ch.id}/messages`, nested), 400, 'VALIDATION_ERROR');
  });

  it('answers a body whose Content-Encoding does not match its bytes with 400, an unknown one with 415', async () => {
    const { bo, ch } = await room(t);
    const path = `/v1/channels/${ch.id}/messages`;
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await bo.api
        .req('post', path)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .send('{"content":"not compressed"}');
      expectError(res, 400, 'VALIDATION_ERROR');
    }
    const unknown = await bo.api
      .req('post', path)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'zstd-ish')
      .send('{"content":"x"}');
    expectError(unknown, 415, 'UNSUPPORTED_MEDIA_TYPE');
    // the real thing inflates (a raw request: the bytes exactly as given)
    const body = gzipSync(Buffer.from('{"content":"really gzipped"}'));
    const ok = await new Promise<number>((resolve, reject) => {
      const r = request(
        `${t.baseUrl}${path}`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${bo.token}`,
            'content-type': 'application/json',
            'content-encoding': 'gzip',
            'content-length': body.length,
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      r.on('error', reject);
      r.end(body);
    });
    expect(ok).toBe(201);
  });

  it('applies the same checks to socket payloads, answering the contract error in the ack', async () => {
    const { bo, ch } = await room(t);
    const s = await connectSocket(t.baseUrl, bo.token);
    for (const payload of [
      { channel_id: ch.id, content: 'a\u0000b' },
      { channel_id: ch.id, content: 'x', metadata: { a: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) } },
      { channel_id: `${ch.id}\uD800` },
    ]) {
      const ack = await s.emitAck('message.send', payload);
      expect([ack.ok, ack.error?.code]).toEqual([false, 'VALIDATION_ERROR']);
    }
    const read = await s.emitAck('channel.read', { channel_id: 'x\u0000' });
    expect([read.ok, read.error?.code]).toEqual([false, 'VALIDATION_ERROR']);
  });

  it('answers malformed ids, cursors and shapes with 4xx in the contract shape, never 500', async () => {
    const { ws, bo } = await room(t);
    const crafted = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const cursors = [
      'x',
      crafted(['a', 'b']),
      crafted([1, 2, 3]),
      crafted(['2026-01-01T00:00:00.000000Z', 'not-a-uuid']),
      crafted({}),
      crafted([null, null]),
      // sync cursors of the right form whose numbers are out of range (an xid8, a safe integer)
      Buffer.from('99999999999999999999.99999999999999999999.1795483000').toString('base64url'),
      Buffer.from('18446744073709551616.1.1795483000').toString('base64url'),
      Buffer.from('1.9007199254740993.1795483000').toString('base64url'),
    ];
    const answers = [
      await ws.api.delete('/v1/webhooks/not-a-uuid'),
      await ws.api.get('/v1/webhooks/not-a-uuid/deliveries'),
      await ws.api.post('/v1/users', { users: [[]] }),
      await ws.api.post('/v1/users', { users: [null, 1, 'x'] }),
      await ws.api.post('/v1/users', []),
      await bo.api.get('/v1/me/sync?since=%E2%82%AC'),
      await bo.api.get('/v1/me/sync?since[a]=1'),
      ...(await Promise.all(
        cursors.flatMap((c) => [
          ws.api.get(`/v1/channels?before=${c}`),
          bo.api.get(`/v1/me/channels?before=${c}`),
          bo.api.get(`/v1/me/sync?since=${c}`),
          ws.api.get(`/v1/bans?before=${c}`),
        ]),
      )),
    ];
    const bad = answers.filter(
      (r) => r.status >= 500 || r.status < 400 || typeof r.body?.error?.code !== 'string',
    );
    expect(
      bad.map((r) => [r.status, (r as unknown as { req: { path: string } }).req.path, r.text.slice(0, 120)]),
    ).toEqual([]);
  });

  it("answers headers over Node's limit with 431 and a malformed request with 400, both in the contract shape", async () => {
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(t.baseUrl);
        const sock = connect(Number(url.port), url.hostname, () => sock.write(text));
        let got = '';
        sock.on('data', (d) => (got += d.toString()));
        sock.on('end', () => resolve(got));
        sock.on('error', reject);
      });
    const big = await raw(`GET /v1/me/channels HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)).error.code).toBe('VALIDATION_ERROR');
    const garbled = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(garbled.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(garbled.slice(garbled.indexOf('\r\n\r\n') + 4)).error.code).toBe('VALIDATION_ERROR');
  });
});
