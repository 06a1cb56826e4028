import { mkdtempSync, rmSync } from 'fs';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { startTestApp, TestApp } from '../support/app';
import { newWorkspace, TestWorkspace } from '../support/fixtures';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverInstance;
// s3rver ships no type declarations
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as S3rverCtor;

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6300010000000500010d0a2db40000000049454e44ae426082',
  'hex',
);
const BUCKET = 'chat-files';

/**
 * The s3 driver against s3rver (an S3 emulator on an ephemeral port). s3rver does not check presigned
 * signatures, so src/infra/storage/s3.storage.spec.ts checks the URL's expiry and signed headers.
 */
describe('attachments: the s3 storage driver (s3rver)', () => {
  let s3: S3rverInstance;
  let dir: string;
  let endpoint: string;
  let t: TestApp;
  let ws: TestWorkspace;

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
    t = await startTestApp({
      SERVICE_STORAGE_DRIVER: 's3',
      SERVICE_S3_BUCKET: BUCKET,
      SERVICE_S3_ENDPOINT: endpoint,
      SERVICE_S3_FORCE_PATH_STYLE: 'true',
      SERVICE_S3_REGION: 'us-east-1',
      SERVICE_S3_ACCESS_KEY_ID: 'S3RVER',
      SERVICE_S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    ws = await newWorkspace(t);
  });

  const presign = async (filename: string, mime: string, size: number) => {
    const res = await ws.api.post('/v1/attachments/presign', { filename, mime_type: mime, size_bytes: size });
    expect(res.status).toBe(200);
    return res.body as {
      upload_url: string;
      headers: Record<string, string>;
      public_url: string;
      key: string;
      expires_at: string;
    };
  };

  it('presigns a path-style PUT into the bucket, valid 900 s, with type and length signed', async () => {
    const p = await presign('cat.png', 'image/png', PNG.length);
    const u = new URL(p.upload_url);
    expect(`${u.origin}${u.pathname}`).toBe(`${endpoint}/${BUCKET}/${p.key}`);
    expect(u.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(u.searchParams.get('X-Amz-SignedHeaders')!.split(';').sort()).toEqual([
      'content-length',
      'content-type',
      'host',
    ]);
    expect(p.public_url).toBe(`${t.baseUrl}/files/${p.key}`);
    expect(p.key.startsWith(`${ws.id}/`)).toBe(true);
  });

  it('uploads with the presigned PUT and reads the bytes back (bucket and /files redirect)', async () => {
    const p = await presign('cat.png', 'image/png', PNG.length);
    const up = await fetch(p.upload_url, { method: 'PUT', headers: p.headers, body: PNG });
    expect(up.status).toBe(200);

    const direct = await fetch(`${endpoint}/${BUCKET}/${p.key}`);
    expect(direct.status).toBe(200);
    expect(direct.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await direct.arrayBuffer()).equals(PNG)).toBe(true);

    // the default public URL redirects to a short-lived GET with the type and disposition set
    const redirect = await fetch(p.public_url, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')!.startsWith(`${endpoint}/${BUCKET}/${p.key}?`)).toBe(true);
    const followed = await fetch(p.public_url);
    expect(followed.status).toBe(200);
    expect(Buffer.from(await followed.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('does not offer the local upload route', async () => {
    const res = await t
      .http()
      .put(
        `/v1/uploads/${ws.id}/0190c0de-0000-7000-8000-000000000000/x.png?expires=1&size=1&type=image%2Fpng&sig=x`,
      )
      .set('Content-Type', 'image/png')
      .send(Buffer.from('x'));
    expect(res.status).toBe(404);
  });
});
