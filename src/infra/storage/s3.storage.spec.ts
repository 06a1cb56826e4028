import { loadConfig } from '../../config/config.schema';
import { S3ObjectStorage } from './s3.storage';

describe('S3ObjectStorage presigned PUT', () => {
  const storage = (env: Record<string, string> = {}) =>
    new S3ObjectStorage(
      loadConfig({
        SERVICE_STORAGE_DRIVER: 's3',
        SERVICE_S3_BUCKET: 'chat-files',
        SERVICE_S3_REGION: 'eu-central-1',
        SERVICE_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
        SERVICE_S3_SECRET_ACCESS_KEY: 'secret-example',
        ...env,
      }),
    );

  it('expires after 900 s and signs content-type and content-length as headers', async () => {
    const s = storage();
    const p = await s.presignPut({
      key: 'ws/id/cat.png',
      contentType: 'image/png',
      contentLength: 68,
      expiresInSeconds: 900,
    });
    const u = new URL(p.url);
    expect(u.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(u.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(u.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIAEXAMPLE\/\d{8}\/eu-central-1\/s3\/aws4_request$/,
    );
    expect(u.searchParams.get('X-Amz-SignedHeaders')!.split(';').sort()).toEqual([
      'content-length',
      'content-type',
      'host',
    ]);
    expect(u.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    // virtual-hosted style on AWS by default; no checksum parameters a browser could not satisfy
    expect(u.host).toBe('chat-files.s3.eu-central-1.amazonaws.com');
    expect(u.pathname).toBe('/ws/id/cat.png');
    expect([...u.searchParams.keys()].filter((k) => /checksum|sdk-checksum/i.test(k))).toEqual([]);
    expect(p.headers).toEqual({ 'Content-Type': 'image/png' });
    expect(Math.abs(p.expiresAt.getTime() - (Date.now() + 900_000))).toBeLessThan(5_000);
    s.close();
  });

  it('signs another URL for another type or size', async () => {
    const s = storage();
    const at = (contentType: string, contentLength: number) =>
      s
        .presignPut({ key: 'ws/id/f', contentType, contentLength, expiresInSeconds: 900 })
        .then((p) => new URL(p.url).searchParams.get('X-Amz-Signature'));
    const base = await at('image/png', 68);
    expect(await at('image/jpeg', 68)).not.toBe(base);
    expect(await at('image/png', 69)).not.toBe(base);
    s.close();
  });

  it('uses path-style URLs on a custom endpoint (MinIO and friends)', async () => {
    const s = storage({ SERVICE_S3_ENDPOINT: 'http://127.0.0.1:9000', SERVICE_S3_FORCE_PATH_STYLE: 'true' });
    const p = await s.presignPut({
      key: 'ws/id/a b.txt',
      contentType: 'text/plain',
      contentLength: 3,
      expiresInSeconds: 900,
    });
    const u = new URL(p.url);
    expect(`${u.origin}${u.pathname}`).toBe('http://127.0.0.1:9000/chat-files/ws/id/a%20b.txt');
    s.close();
  });
});
