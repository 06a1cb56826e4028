import { createPublicKey, createVerify, generateKeyPairSync } from 'crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import nock from 'nock';
import { tmpdir } from 'os';
import { join } from 'path';

export const PROJECT_ID = 'chat-service-test';
export const CLIENT_EMAIL = `push@${PROJECT_ID}.iam.gserviceaccount.com`;
export const ACCESS_TOKEN = 'ya29.test-access-token';

/** One request FCM's HTTP v1 endpoint received. */
export interface FcmRequest {
  authorization: string | undefined;
  body: { message: { token: string } & Record<string, unknown>; validate_only?: boolean };
}

/** How the fake FCM answers a token: success, or one of FCM's real error bodies. */
export type FcmAnswer = 'ok' | 'unregistered' | 'invalid' | 'unavailable';

function fcmError(answer: Exclude<FcmAnswer, 'ok'>): [number, unknown] {
  const detail = (errorCode: string) => [
    { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode },
  ];
  switch (answer) {
    case 'unregistered':
      return [
        404,
        {
          error: {
            code: 404,
            message: 'Requested entity was not found.',
            status: 'NOT_FOUND',
            details: detail('UNREGISTERED'),
          },
        },
      ];
    case 'invalid':
      return [
        400,
        {
          error: {
            code: 400,
            message: 'The registration token is not a valid FCM registration token',
            status: 'INVALID_ARGUMENT',
            details: detail('INVALID_ARGUMENT'),
          },
        },
      ];
    case 'unavailable':
      return [
        500,
        {
          error: {
            code: 500,
            message: 'Internal error encountered.',
            status: 'INTERNAL',
            details: detail('INTERNAL'),
          },
        },
      ];
  }
}

/**
 * A Firebase project in a box: a generated service-account key file, Google's OAuth token endpoint
 * (which checks the key's JWT assertion) and FCM's HTTP v1 send endpoint, both intercepted with nock
 * in this process, where the in-process app's firebase-admin sends them. Loopback stays reachable.
 */
export class FakeFcm {
  readonly dir = mkdtempSync(join(tmpdir(), 'fake-fcm-'));
  readonly serviceAccountFile = join(this.dir, 'service-account.json');
  readonly requests: FcmRequest[] = [];
  readonly tokenRequests: string[] = [];
  /** Answer per token; unknown tokens succeed. */
  readonly answers = new Map<string, FcmAnswer>();
  private readonly publicKeyPem: string;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    writeFileSync(
      this.serviceAccountFile,
      JSON.stringify({
        type: 'service_account',
        project_id: PROJECT_ID,
        private_key_id: 'test-key-1',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: CLIENT_EMAIL,
        client_id: '1234567890',
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: 'https://oauth2.googleapis.com/token',
      }),
    );
  }

  start(): void {
    // nock intercepts http.request for the whole process until restore(): a later test file in the
    // same jest worker must not run its requests through it
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
    nock.enableNetConnect((host) => /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host));
    nock('https://oauth2.googleapis.com')
      .persist()
      .post('/token')
      .reply((_uri: string, body: nock.Body) => {
        const form = new URLSearchParams(typeof body === 'string' ? body : '');
        const assertion = form.get('assertion') ?? '';
        this.tokenRequests.push(assertion);
        if (
          form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' ||
          !this.validAssertion(assertion)
        ) {
          return [400, { error: 'invalid_grant' }];
        }
        return [200, { access_token: ACCESS_TOKEN, expires_in: 3600, token_type: 'Bearer' }];
      });
    const requests = this.requests;
    const answers = this.answers;
    nock('https://fcm.googleapis.com')
      .persist()
      .post(`/v1/projects/${PROJECT_ID}/messages:send`)
      .reply(function (this: nock.ReplyFnContext, _uri: string, body: nock.Body) {
        const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as FcmRequest['body'];
        const auth = this.req.headers.authorization;
        requests.push({ authorization: Array.isArray(auth) ? auth[0] : auth, body: parsed });
        const answer = answers.get(parsed.message.token) ?? 'ok';
        if (answer === 'ok') return [200, { name: `projects/${PROJECT_ID}/messages/${requests.length}` }];
        return fcmError(answer);
      });
  }

  stop(): void {
    nock.cleanAll();
    nock.enableNetConnect();
    nock.restore();
    rmSync(this.dir, { recursive: true, force: true });
  }

  reset(): void {
    this.requests.length = 0;
    this.answers.clear();
  }

  /** The OAuth assertion is an RS256 JWT by the service account for the FCM scope. */
  private validAssertion(jwt: string): boolean {
    const [h, p, s] = jwt.split('.');
    if (!h || !p || !s) return false;
    const ok = createVerify('RSA-SHA256')
      .update(`${h}.${p}`)
      .verify(createPublicKey(this.publicKeyPem), Buffer.from(s, 'base64url'));
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as {
      iss?: string;
      scope?: string;
    };
    return ok && claims.iss === CLIENT_EMAIL && (claims.scope ?? '').includes('firebase.messaging');
  }
}
