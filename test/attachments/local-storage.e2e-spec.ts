import { existsSync, readdirSync, statSync } from 'fs';
import { request as httpRequest } from 'http';
import { join } from 'path';
import { AttachmentLookup } from '../../src/attachments/attachment-lookup';
import { LocalObjectStorage } from '../../src/infra/storage/local.storage';
import { ObjectStorage } from '../../src/infra/storage/object-storage';
import { startTestApp, TestApp } from '../support/app';
import { expectError } from '../support/errors';
import { admin, newWorkspace, TestUser, TestWorkspace } from '../support/fixtures';

// A 1×1 transparent PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6300010000000500010d0a2db40000000049454e44ae426082',
  'hex',
);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

interface Presigned {
  upload_url: string;
  method: string;
  headers: Record<string, string>;
  public_url: string;
  key: string;
  expires_at: string;
}

const put = (p: { upload_url: string }, body: Buffer, headers: Record<string, string>) =>
  fetch(p.upload_url, { method: 'PUT', headers, body, signal: AbortSignal.timeout(10_000) });

/** Every file under a directory, relative to it. */
function walk(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) =>
    statSync(join(dir, n)).isDirectory() ? walk(join(dir, n), `${prefix}${n}/`) : [`${prefix}${n}`],
  );
}

describe('attachments: presign and the local storage driver', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let ana: TestUser;
  let bo: TestUser;
  let cy: TestUser;
  let channel: { id: string; external_id: string };

  beforeAll(async () => {
    t = await startTestApp({ SERVICE_MAX_ATTACHMENT_SIZE_BYTES: String(4 * 1024 * 1024) });
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    ws = await newWorkspace(t);
    ana = await ws.user('ana');
    bo = await ws.user('bo');
    cy = await ws.user('cy');
    const res = await ws.api.post('/v1/channels', {
      type: 'group',
      external_id: 'team',
      name: 'Team',
      created_by: 'ana',
      member_external_ids: ['bo'],
    });
    expect(res.status).toBe(201);
    channel = res.body;
  });

  const presign = async (
    body: Record<string, unknown>,
    as: { post: TestWorkspace['api']['post'] } = ws.api,
  ): Promise<Presigned> => {
    const res = await as.post('/v1/attachments/presign', body);
    if (res.status !== 200) throw new Error(`presign answered ${res.status} ${res.text}`);
    return res.body as Presigned;
  };

  it('presigns: PUT url under /v1/uploads, Content-Type header, public_url under /files/, a generated key, 15 minutes', async () => {
    const t0 = Date.now();
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length });
    expect(Object.keys(p).sort()).toEqual([
      'expires_at',
      'headers',
      'key',
      'method',
      'public_url',
      'upload_url',
    ]);
    expect(p.method).toBe('PUT');
    expect(p.headers).toEqual({ 'Content-Type': 'image/png' });
    expect(p.key).toMatch(new RegExp(`^${ws.id}/[0-9a-f-]{36}/cat\\.png$`));
    expect(p.public_url).toBe(`${t.baseUrl}/files/${p.key}`);
    expect(p.upload_url.startsWith(`${t.baseUrl}/v1/uploads/${p.key}?`)).toBe(true);
    const ahead = (Date.parse(p.expires_at) - t0) / 1000;
    expect(ahead).toBeGreaterThan(899);
    expect(ahead).toBeLessThanOrEqual(901);
    expect(p.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // two presigns of the same name never share a key
    expect(
      (await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length })).key,
    ).not.toBe(p.key);
  });

  it('uploads with PUT and serves the bytes back with the declared type, nosniff, inline for images', async () => {
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length }, ana.api);
    const up = await put(p, PNG, p.headers);
    expect(up.status).toBe(200);
    expect(up.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    const down = await fetch(p.public_url);
    expect(down.status).toBe(200);
    expect(Buffer.from(await down.arrayBuffer()).equals(PNG)).toBe(true);
    expect(down.headers.get('content-type')).toBe('image/png');
    expect(down.headers.get('x-content-type-options')).toBe('nosniff');
    expect(down.headers.get('content-disposition')).toMatch(/^inline; filename="cat.png"/);
    expect(down.headers.get('content-security-policy')).toContain('sandbox');
  });

  it('serves everything that is not an image as an attachment, with its declared type', async () => {
    for (const [filename, mime, bytes] of [
      ['report.pdf', 'application/pdf', PDF],
      ['page.txt', 'text/plain', Buffer.from('<html><script>alert(1)</script></html>')],
      ['data.bin', 'application/octet-stream', Buffer.from([0, 1, 2, 3])],
    ] as const) {
      const p = await presign({ filename, mime_type: mime, size_bytes: bytes.length });
      expect((await put(p, bytes, p.headers)).status).toBe(200);
      const down = await fetch(p.public_url);
      expect(down.status).toBe(200);
      expect(down.headers.get('content-type')).toBe(mime);
      expect(down.headers.get('x-content-type-options')).toBe('nosniff');
      expect(down.headers.get('content-disposition')).toBe(
        `attachment; filename="${filename}"; filename*=UTF-8''${filename}`,
      );
      expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  it('streams uploads far beyond the JSON body limit (raw body up to the attachment limit)', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    const p = await presign({ filename: 'big.zip', mime_type: 'application/zip', size_bytes: big.length });
    expect((await put(p, big, p.headers)).status).toBe(200);
    const down = await fetch(p.public_url);
    expect(Buffer.from(await down.arrayBuffer()).equals(big)).toBe(true);
  });

  it('refuses a wrong size or a wrong type with 400 VALIDATION_ERROR and stores nothing', async () => {
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length });
    for (const [body, headers] of [
      [Buffer.concat([PNG, Buffer.from('x')]), p.headers],
      [PNG.subarray(1), p.headers],
      [PNG, { 'Content-Type': 'image/jpeg' }],
      [PNG, { 'Content-Type': 'text/html' }],
      [PNG, {}],
    ] as const) {
      const res = await put(p, body, headers);
      expect(res.status).toBe(400);
      const b = (await res.json()) as { error: { code: string } };
      expect(b.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await fetch(p.public_url)).status).toBe(404);
  });

  it('refuses a body without Content-Length or longer than declared (chunked), and keeps no partial file', async () => {
    const p = await presign({ filename: 'a.txt', mime_type: 'text/plain', size_bytes: 5 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        p.upload_url,
        { method: 'PUT', headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('hello, ');
      req.end('world');
    });
    expect(status).toBe(400);
    expect((await fetch(p.public_url)).status).toBe(404);
  });

  it('refuses an expired or tampered URL with 403 FORBIDDEN', async () => {
    const storage = t.app.get<ObjectStorage, LocalObjectStorage>(ObjectStorage);
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length });
    const expired = storage.uploadUrl({
      key: p.key,
      contentType: 'image/png',
      size: PNG.length,
      expires: Math.floor(Date.now() / 1000) - 1,
    });
    const u = new URL(p.upload_url);
    const tamper = (name: string, value: string) => {
      const v = new URL(u);
      v.searchParams.set(name, value);
      return v.toString();
    };
    const sig = u.searchParams.get('sig')!;
    const otherKey = new URL(u);
    otherKey.pathname = otherKey.pathname.replace(/cat\.png$/, 'dog.png');
    const withoutSig = new URL(u);
    withoutSig.searchParams.delete('sig');
    for (const url of [
      expired,
      tamper('sig', `${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`),
      tamper('expires', String(Number(u.searchParams.get('expires')) + 3600)),
      tamper('size', String(PNG.length + 1)),
      tamper('type', 'text/html'),
      otherKey.toString(),
      withoutSig.toString(),
    ]) {
      const res = await fetch(url, { method: 'PUT', headers: p.headers, body: PNG });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    }
    // the genuine URL still works
    expect((await put(p, PNG, p.headers)).status).toBe(200);

    // a deleted workspace's URLs store nothing
    const gone = await newWorkspace(t);
    const q = await presign(
      { filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length },
      gone.api,
    );
    expect((await admin(t).delete(`/v1/admin/workspaces/${gone.id}`)).status).toBe(204);
    expect((await put(q, PNG, q.headers)).status).toBe(403);
  });

  it('keeps client paths out of keys: traversal names become safe base names inside the files directory', async () => {
    const storage = t.app.get<ObjectStorage, LocalObjectStorage>(ObjectStorage);
    const bytes = Buffer.from('traversal test');
    const cases: [string, string][] = [
      ['../../etc/passwd.txt', 'passwd.txt'],
      ['..\\..\\windows\\win.ini.txt', 'win.ini.txt'],
      ['/etc/passwd.txt', 'passwd.txt'],
      ['..', 'file'],
      ['../', 'file'],
      ['.bashrc', 'bashrc'],
      ['a/../../b.txt', 'b.txt'],
      ['x\ty\n\r.txt', 'xy.txt'],
      ['evil\u202Etxt.exe', 'eviltxt.exe'],
      ['%2e%2e%2fsecret.txt', '2e_2e_2fsecret.txt'],
      ['My Report (final).txt', 'My_Report_final_.txt'],
      ['résumé 日本.txt', 'résumé_日本.txt'],
    ];
    for (const [filename, keyName] of cases) {
      const p = await presign({ filename, mime_type: 'text/plain', size_bytes: bytes.length });
      const segments = p.key.split('/');
      expect(segments).toHaveLength(3);
      expect(segments[2]).toBe(keyName);
      expect(p.public_url).not.toContain('/../');
      expect(p.upload_url).not.toContain('/../');
      expect((await put(p, bytes, p.headers)).status).toBe(200);
      const down = await fetch(p.public_url);
      expect([filename, down.status]).toEqual([filename, 200]);
      expect(Buffer.from(await down.arrayBuffer()).equals(bytes)).toBe(true);
      expect(existsSync(join(storage.filesDir, ...segments))).toBe(true);
    }
    // a NUL byte never gets that far: every input with one is refused at the edge
    const nul = await ana.api.post('/v1/attachments/presign', {
      filename: 'x\u0000y.txt',
      mime_type: 'text/plain',
      size_bytes: 1,
    });
    expect([nul.status, nul.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    // nothing was written anywhere but <workspace>/<uuid>/<name>
    for (const f of walk(storage.filesDir)) expect(f).toMatch(/^[0-9a-f-]{36}\/[0-9a-f-]{36}\/[^/]+$/);
    // the display name keeps spaces but never a path
    const lookup = t.app.get(AttachmentLookup);
    const p = await presign({ filename: '../My Report.txt', mime_type: 'text/plain', size_bytes: 3 });
    expect((await lookup.find(ws.id, p.public_url))?.filename).toBe('My Report.txt');
  });

  it('GET /files never leaves the files directory, whatever the encoding', async () => {
    const p = await presign({ filename: 'ok.txt', mime_type: 'text/plain', size_bytes: 2 });
    expect((await put(p, Buffer.from('ok'), p.headers)).status).toBe(200);
    const [wsId, uuid] = p.key.split('/');
    for (const path of [
      '/files/..%2f..%2f..%2fetc%2fpasswd',
      '/files/..%2F..%2F..%2Fetc%2Fpasswd',
      '/files/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/files/..%5c..%5c..%5cetc%5cpasswd',
      `/files/${wsId}/${uuid}/..%2f..%2f..%2f..%2fetc%2fpasswd`,
      `/files/${wsId}/${uuid}/%2e%2e`,
      `/files/${wsId}/..%2f${wsId}/${uuid}/ok.txt`,
      `/files/${wsId}/${uuid}/ok.txt%00.png`,
      '/files/etc/passwd',
      '/files/',
    ]) {
      const res = await t.http().get(path);
      expect([400, 404]).toContain(res.status);
      expect(res.text).not.toMatch(/root:.*:0:0:/);
    }
    expect((await t.http().get(`/files/${p.key}`)).status).toBe(200);
  });

  it('presign: 415 for a type that is not allowed, 413 over the size limit, 400 for a malformed body', async () => {
    for (const mime of ['video/mp4', 'application/x-msdownload', 'text/html', 'image/svg+xml', '']) {
      const res = await ws.api.post('/v1/attachments/presign', {
        filename: 'x.bin',
        mime_type: mime,
        size_bytes: 100,
      });
      if (mime === '') expectError(res, 400, 'VALIDATION_ERROR');
      else expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expectError(
      await ws.api.post('/v1/attachments/presign', {
        filename: 'x.png',
        mime_type: 'image/png',
        size_bytes: 4 * 1024 * 1024 + 1,
      }),
      413,
      'ATTACHMENT_TOO_LARGE',
    );
    expect(
      (
        await ws.api.post('/v1/attachments/presign', {
          filename: 'x.png',
          mime_type: 'image/png',
          size_bytes: 4 * 1024 * 1024,
        })
      ).status,
    ).toBe(200);
    // the type is compared without parameters and case
    expect(
      (
        await ws.api.post('/v1/attachments/presign', {
          filename: 'x.png',
          mime_type: 'Image/PNG; x=y',
          size_bytes: 10,
        })
      ).body.headers,
    ).toEqual({ 'Content-Type': 'image/png' });
    for (const bad of [
      { mime_type: 'image/png', size_bytes: 10 },
      { filename: 'x.png', mime_type: 'image/png' },
      { filename: 'x.png', mime_type: 'image/png', size_bytes: 0 },
      { filename: 'x.png', mime_type: 'image/png', size_bytes: 1.5 },
      { filename: 'x.png', mime_type: 'image/png', size_bytes: '10' },
      { filename: '', mime_type: 'image/png', size_bytes: 10 },
      { filename: 'x.png', mime_type: 'image/png', size_bytes: 10, path: '/etc' },
    ]) {
      expectError(await ws.api.post('/v1/attachments/presign', bad), 400, 'VALIDATION_ERROR');
    }
    expectError(
      await t
        .http()
        .post('/v1/attachments/presign')
        .send({ filename: 'x.png', mime_type: 'image/png', size_bytes: 10 }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('channel_id: members and the backend may presign for it; non-members 403, other workspaces 404', async () => {
    const body = { filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length };
    expect((await ws.api.post('/v1/attachments/presign', { ...body, channel_id: channel.id })).status).toBe(
      200,
    );
    expect((await bo.api.post('/v1/attachments/presign', { ...body, channel_id: 'team' })).status).toBe(200);
    expectError(
      await cy.api.post('/v1/attachments/presign', { ...body, channel_id: channel.id }),
      403,
      'NOT_A_MEMBER',
    );
    expectError(
      await ana.api.post('/v1/attachments/presign', { ...body, channel_id: 'nope' }),
      404,
      'NOT_FOUND',
    );
    const other = await newWorkspace(t);
    const [zed] = await other.users('zed');
    expectError(
      await zed!.api.post('/v1/attachments/presign', { ...body, channel_id: channel.id }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await other.api.post('/v1/attachments/presign', { ...body, channel_id: channel.id }),
      404,
      'NOT_FOUND',
    );
    // without channel_id any user of the workspace may presign
    expect((await cy.api.post('/v1/attachments/presign', body)).status).toBe(200);
  });

  it('AttachmentLookup gives the presign metadata for this workspace only', async () => {
    const lookup = t.app.get(AttachmentLookup);
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length });
    expect(await lookup.find(ws.id, p.public_url)).toEqual({
      url: p.public_url,
      mime_type: 'image/png',
      size_bytes: PNG.length,
      filename: 'cat.png',
    });
    const other = await newWorkspace(t);
    expect(await lookup.find(other.id, p.public_url)).toBeNull();
    expect(await lookup.find(ws.id, `${p.public_url}?x=1`)).toBeNull();
    expect(await lookup.find(ws.id, p.public_url.replace('cat.png', 'dog.png'))).toBeNull();
    expect(await lookup.find(ws.id, `https://elsewhere.example/files/${p.key}`)).toBeNull();
    expect(await lookup.find(ws.id, `${t.baseUrl}/files/`)).toBeNull();
  });

  it('a message with the uploaded file carries its attachment metadata', async () => {
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length }, ana.api);
    expect((await put(p, PNG, p.headers)).status).toBe(200);
    const sent = await ana.api.post(`/v1/channels/${channel.id}/messages`, { attachment_url: p.public_url });
    expect(sent.status).toBe(201);
    expect(sent.body.type).toBe('image');
    expect(sent.body.attachment_url).toBe(p.public_url);
    expect(sent.body.attachment).toEqual({
      url: p.public_url,
      mime_type: 'image/png',
      size_bytes: PNG.length,
      filename: 'cat.png',
    });
    const doc = await presign(
      { filename: 'report.pdf', mime_type: 'application/pdf', size_bytes: PDF.length },
      ana.api,
    );
    expect((await put(doc, PDF, doc.headers)).status).toBe(200);
    const file = await ana.api.post(`/v1/channels/${channel.id}/messages`, {
      content: 'the report',
      attachment_url: doc.public_url,
    });
    expect(file.body).toMatchObject({
      type: 'file',
      content: 'the report',
      attachment: { mime_type: 'application/pdf', filename: 'report.pdf' },
    });
    const history = await bo.api.get(`/v1/channels/${channel.id}/messages`);
    expect(history.body.messages[0].attachment.filename).toBe('report.pdf');
  });

  it('answers a CORS preflight for browser uploads', async () => {
    const p = await presign({ filename: 'cat.png', mime_type: 'image/png', size_bytes: PNG.length });
    const res = await fetch(p.upload_url, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PUT' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('PUT');
  });
});
