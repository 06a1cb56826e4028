import { randomBytes } from 'crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { CONFIG_SCHEMA, ConfigError, environment, loadConfig } from './config.schema';

const KEY = randomBytes(32).toString('base64');

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 3000,
      SERVICE_DATA_DIR: './data',
      SERVICE_ROLE: 'all',
      SERVICE_MAX_MESSAGE_SIZE_BYTES: 8192,
      SERVICE_MAX_ATTACHMENT_SIZE_BYTES: 10_485_760,
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: 60,
      SERVICE_STORAGE_DRIVER: 'local',
      SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
      SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: [30, 120, 600, 3600, 21600],
      SERVICE_WEBHOOK_RETRY_JITTER: 0.2,
      SERVICE_WEBHOOK_TIMEOUT_MS: 10_000,
      SERVICE_WEBHOOK_AUTO_DISABLE_FAILURES: 24,
      SERVICE_EVENT_RETENTION_DAYS: 30,
      LOG_LEVEL: 'info',
      embedded: true,
      baseUrl: 'http://localhost:3000',
      publicFilesUrl: 'http://localhost:3000/files/',
    });
    for (const k of [
      'DATABASE_URL',
      'REDIS_URL',
      'SERVICE_ADMIN_TOKEN',
      'SERVICE_EDIT_WINDOW_SECONDS',
      'SERVICE_UNSEND_WINDOW_SECONDS',
      'SERVICE_ENCRYPTION_KEY',
      'SERVICE_ALLOWED_ATTACHMENT_TYPES',
    ] as const) {
      expect(c[k]).toBeUndefined();
    }
  });

  it('parses set values', () => {
    const c = loadConfig({
      PORT: '8080',
      SERVICE_BASE_URL: 'https://chat.example.com/',
      DATABASE_URL: 'postgresql://u@db:5432/chat',
      SERVICE_ENCRYPTION_KEY: KEY,
      REDIS_URL: 'redis://cache:6379',
      SERVICE_ROLE: 'worker',
      SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: '0.2, 0.2,0.2',
      SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'TRUE',
      SERVICE_EDIT_WINDOW_SECONDS: '900',
      SERVICE_ALLOWED_ATTACHMENT_TYPES: 'image/png, application/pdf',
    });
    expect(c.PORT).toBe(8080);
    expect(c.baseUrl).toBe('https://chat.example.com');
    expect(c.publicFilesUrl).toBe('https://chat.example.com/files/');
    expect(c.embedded).toBe(false);
    expect(c.SERVICE_ENCRYPTION_KEY).toEqual(Buffer.from(KEY, 'base64'));
    expect(c.SERVICE_ROLE).toBe('worker');
    expect(c.SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS).toEqual([0.2, 0.2, 0.2]);
    expect(c.SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(c.SERVICE_EDIT_WINDOW_SECONDS).toBe(900);
    expect(c.SERVICE_ALLOWED_ATTACHMENT_TYPES).toEqual(['image/png', 'application/pdf']);
  });

  it('treats an empty value as unset', () => {
    const c = loadConfig({ SERVICE_ADMIN_TOKEN: '', SERVICE_EDIT_WINDOW_SECONDS: '', DATABASE_URL: '' });
    expect(c.SERVICE_ADMIN_TOKEN).toBeUndefined();
    expect(c.SERVICE_EDIT_WINDOW_SECONDS).toBeUndefined();
    expect(c.embedded).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['SERVICE_BASE_URL', 'not a url'],
    ['SERVICE_BASE_URL', 'ftp://example.com'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['SERVICE_ROLE', 'web'],
    ['SERVICE_ENCRYPTION_KEY', 'c2hvcnQ='],
    ['SERVICE_MAX_MESSAGE_SIZE_BYTES', '0'],
    ['SERVICE_MAX_ATTACHMENT_SIZE_BYTES', '-1'],
    ['SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE', 'lots'],
    ['SERVICE_EDIT_WINDOW_SECONDS', '0'],
    ['SERVICE_UNSEND_WINDOW_SECONDS', 'forever'],
    ['SERVICE_STORAGE_DRIVER', 'gcs'],
    ['SERVICE_S3_PUBLIC_URL', 'files'],
    ['SERVICE_S3_ENDPOINT', 'minio:9000'],
    ['SERVICE_S3_FORCE_PATH_STYLE', 'maybe'],
    ['SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'sometimes'],
    ['SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS', '30,,120'],
    ['SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS', '30,-1'],
    ['SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS', 'soon'],
    ['SERVICE_WEBHOOK_RETRY_JITTER', '1.5'],
    ['SERVICE_WEBHOOK_RETRY_JITTER', 'abc'],
    ['SERVICE_WEBHOOK_TIMEOUT_MS', '10'],
    ['SERVICE_WEBHOOK_AUTO_DISABLE_FAILURES', '0'],
    ['SERVICE_EVENT_RETENTION_DAYS', '0'],
    ['LOG_LEVEL', 'verbose'],
    ['SERVICE_CORS_ORIGINS', 'app.example.com'],
    ['SERVICE_CORS_ORIGINS', 'https://app.example.com/chat'],
    ['SERVICE_CORS_ORIGINS', 'https://app.example.com?x=1'],
    ['SERVICE_CORS_ORIGINS', 'ftp://files.example.com'],
    ['SERVICE_CORS_ORIGINS', 'https://*.example.com'],
    ['SERVICE_CORS_ORIGINS', '*,https://app.example.com'],
  ])('a bad %s (%p) stops start-up with a message naming it', (name, value) => {
    expect(problems({ [name]: value })).toMatch(new RegExp(`^  - ${name} `, 'm'));
  });

  it('names every bad variable at once', () => {
    const msg = problems({ PORT: 'x', SERVICE_ROLE: 'y', LOG_LEVEL: 'z' });
    for (const name of ['PORT', 'SERVICE_ROLE', 'LOG_LEVEL']) expect(msg).toContain(`- ${name} `);
  });

  it('requires SERVICE_ENCRYPTION_KEY with DATABASE_URL', () => {
    expect(problems({ DATABASE_URL: 'postgresql://localhost/chat' })).toContain('SERVICE_ENCRYPTION_KEY');
    expect(() =>
      loadConfig({ DATABASE_URL: 'postgresql://localhost/chat', SERVICE_ENCRYPTION_KEY: KEY }),
    ).not.toThrow();
    expect(() => loadConfig({ SERVICE_ENCRYPTION_KEY: KEY })).not.toThrow();
  });

  it('checks the bootstrap pair together and by shape', () => {
    expect(problems({ SERVICE_BOOTSTRAP_API_KEY: 'pk_abcdefgh' })).toContain('SERVICE_BOOTSTRAP_API_SECRET');
    expect(problems({ SERVICE_BOOTSTRAP_API_SECRET: 'sk_abcdefghijklmnop' })).toContain(
      'SERVICE_BOOTSTRAP_API_KEY',
    );
    expect(
      problems({ SERVICE_BOOTSTRAP_API_KEY: 'key', SERVICE_BOOTSTRAP_API_SECRET: 'sk_abcdefghijklmnop' }),
    ).toContain('SERVICE_BOOTSTRAP_API_KEY must look like');
    expect(
      problems({ SERVICE_BOOTSTRAP_API_KEY: 'pk_abcdefgh', SERVICE_BOOTSTRAP_API_SECRET: 'sk_short' }),
    ).toContain('SERVICE_BOOTSTRAP_API_SECRET must look like');
    expect(() =>
      loadConfig({
        SERVICE_BOOTSTRAP_API_KEY: 'pk_abcdefgh',
        SERVICE_BOOTSTRAP_API_SECRET: 'sk_abcdefghijklmnop',
      }),
    ).not.toThrow();
  });

  it('defaults SERVICE_CORS_ORIGINS to any origin embedded and to none with DATABASE_URL', () => {
    expect(loadConfig({}).corsOrigins).toBe('*');
    expect(
      loadConfig({ DATABASE_URL: 'postgresql://localhost/chat', SERVICE_ENCRYPTION_KEY: KEY }).corsOrigins,
    ).toEqual([]);
    expect(loadConfig({ SERVICE_CORS_ORIGINS: '' }).corsOrigins).toBe('*');
    expect(loadConfig({ SERVICE_CORS_ORIGINS: ' * ' }).corsOrigins).toBe('*');
    expect(
      loadConfig({
        DATABASE_URL: 'postgresql://localhost/chat',
        SERVICE_ENCRYPTION_KEY: KEY,
        SERVICE_CORS_ORIGINS: '*',
      }).corsOrigins,
    ).toBe('*');
  });

  it('turns the demo sign-in on embedded and off with DATABASE_URL, unless SERVICE_DEMO says otherwise', () => {
    const pg = { DATABASE_URL: 'postgresql://localhost/chat', SERVICE_ENCRYPTION_KEY: KEY };
    expect(loadConfig({}).demoSignIn).toBe(true);
    expect(loadConfig({ SERVICE_DEMO: 'false' }).demoSignIn).toBe(false);
    expect(loadConfig(pg).demoSignIn).toBe(false);
    expect(loadConfig({ ...pg, SERVICE_DEMO: '' }).demoSignIn).toBe(false);
    expect(loadConfig({ ...pg, SERVICE_DEMO: 'true' }).demoSignIn).toBe(true);
    expect(problems({ SERVICE_DEMO: 'sometimes' })).toContain('SERVICE_DEMO must be true or false');
  });

  it('normalizes listed origins the way browsers send them', () => {
    const c = loadConfig({
      SERVICE_CORS_ORIGINS: 'https://App.Example.com/, http://localhost:5173,https://a.example.com:443',
    });
    expect(c.corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
      'https://a.example.com',
    ]);
  });

  it('names the bad origin', () => {
    expect(
      problems({ SERVICE_CORS_ORIGINS: 'https://ok.example.com,https://app.example.com/chat' }),
    ).toContain(
      'SERVICE_CORS_ORIGINS must be * or a comma list of origins like https://app.example.com (scheme://host[:port], no path), got "https://app.example.com/chat"',
    );
  });

  it('requires a bucket for the s3 driver', () => {
    expect(problems({ SERVICE_STORAGE_DRIVER: 's3' })).toContain('SERVICE_S3_BUCKET');
    expect(() => loadConfig({ SERVICE_STORAGE_DRIVER: 's3', SERVICE_S3_BUCKET: 'b' })).not.toThrow();
  });

  it('documents every variable', () => {
    for (const [name, spec] of Object.entries(CONFIG_SCHEMA)) {
      expect(`${name}: ${spec.description}`.length).toBeGreaterThan(name.length + 5);
    }
  });
});

describe('environment (.env)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chat-env-'));
  const file = join(dir, '.env');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a .env file under the environment: a variable set in the environment wins', () => {
    writeFileSync(
      file,
      '# a comment\nPORT=4100\nSERVICE_SEARCH_ENABLED=false\nSERVICE_BASE_URL="https://chat.example.com"\n',
    );
    const env = environment({ PORT: '4200' }, file);
    const config = loadConfig(env);
    expect(config.PORT).toBe(4200);
    expect(config.baseUrl).toBe('https://chat.example.com');
    expect(env.SERVICE_SEARCH_ENABLED).toBe('false');
  });

  it('names a bad variable that came from .env like any other', () => {
    writeFileSync(file, 'PORT=not-a-port\n');
    expect(() => loadConfig(environment({}, file))).toThrow(/PORT must be an integer/);
  });

  it('is the environment alone when there is no .env', () => {
    const env = { PORT: '4300' };
    expect(environment(env, join(dir, 'missing.env'))).toBe(env);
  });
});
