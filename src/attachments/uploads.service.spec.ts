import { isSignedUrlPath } from './uploads.service';

describe('isSignedUrlPath', () => {
  it.each(['/v1/uploads/ws/id/cat.png', '/files/ws/id/cat.png', '/v1/downloads/exports/ws/doc.json'])(
    '%s is a signed-URL route (any origin)',
    (path) => {
      expect(isSignedUrlPath(path)).toBe(true);
    },
  );

  it.each(['/v1/attachments/presign', '/v1/uploads', '/v1/uploadsx/a', '/filesystem', '/v1/files/a', '/'])(
    '%s is an API route (the CORS allow-list)',
    (path) => {
      expect(isSignedUrlPath(path)).toBe(false);
    },
  );
});
