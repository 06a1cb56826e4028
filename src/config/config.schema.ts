import { parse as parseEnvFile } from 'dotenv';
import { existsSync, readFileSync } from 'fs';
import { resolve } from 'path';

/**
 * Every environment variable of CONTRACT §13 in one typed schema. `loadConfig` reads them all,
 * collects every bad value and fails with one message naming each variable.
 */
type Parser<T> = (raw: string) => T;

interface VarSpec<T> {
  default?: string;
  description: string;
  parse: Parser<T>;
}

class ConfigValueError extends Error {}

const str: Parser<string> = (v) => v;
const int =
  (min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> =>
  (v) => {
    if (!/^-?\d+$/.test(v.trim())) throw new ConfigValueError(`must be an integer, got "${v}"`);
    const n = Number(v);
    if (n < min || n > max) throw new ConfigValueError(`must be between ${min} and ${max}, got ${n}`);
    return n;
  };
const num =
  (min: number, max: number): Parser<number> =>
  (v) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n)) throw new ConfigValueError(`must be a number, got "${v}"`);
    if (n < min || n > max) throw new ConfigValueError(`must be between ${min} and ${max}, got ${n}`);
    return n;
  };
const bool: Parser<boolean> = (v) => {
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(s)) return true;
  if (['false', '0', 'no', ''].includes(s)) return false;
  throw new ConfigValueError(`must be true or false, got "${v}"`);
};
const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (v) => {
    if (!(values as string[]).includes(v))
      throw new ConfigValueError(`must be one of ${values.join(', ')}, got "${v}"`);
    return v as T;
  };
const url =
  (...protocols: string[]): Parser<string> =>
  (v) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new ConfigValueError(`must be a URL, got "${v}"`);
    }
    if (!protocols.includes(u.protocol)) {
      throw new ConfigValueError(`must use ${protocols.join(' or ')}, got "${u.protocol}"`);
    }
    return v;
  };
const optional =
  <T>(p: Parser<T>): Parser<T | undefined> =>
  (v) =>
    v.trim() === '' ? undefined : p(v);
const key32: Parser<Buffer | undefined> = (v) => {
  if (v.trim() === '') return undefined;
  const b = Buffer.from(v, 'base64');
  if (b.length !== 32) throw new ConfigValueError(`must be 32 bytes in base64 (got ${b.length} bytes)`);
  return b;
};
const schedule: Parser<number[]> = (v) => {
  const parts = v.split(',').map((s) => s.trim());
  const out = parts.map((p) => Number(p));
  if (parts.some((p) => p === '') || out.some((n) => !Number.isFinite(n) || n < 0 || n > 7 * 86400)) {
    throw new ConfigValueError(`must be a comma list of seconds (0..604800), got "${v}"`);
  }
  return out;
};
const list: Parser<string[] | undefined> = (v) => {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
};

/** Browser origins allowed to call the API: `*` alone, or a comma list of `scheme://host[:port]`. */
const origins: Parser<'*' | string[] | undefined> = (v) => {
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) return undefined;
  if (items.includes('*')) {
    if (items.length > 1)
      throw new ConfigValueError(`must be * alone or a comma list of origins, got "${v}"`);
    return '*';
  }
  return items.map((item) => {
    if (item.includes('*'))
      throw new ConfigValueError(`must list exact origins (a wildcard only as * alone), got "${item}"`);
    let u: URL | undefined;
    try {
      u = new URL(item);
    } catch {
      u = undefined;
    }
    // an origin is scheme://host[:port]: a path, query or credentials mean a URL was pasted
    if (
      !u ||
      !['http:', 'https:'].includes(u.protocol) ||
      u.pathname !== '/' ||
      u.search ||
      u.hash ||
      u.username ||
      u.password ||
      /[?#]/.test(item)
    ) {
      throw new ConfigValueError(
        `must be * or a comma list of origins like https://app.example.com (scheme://host[:port], no path), got "${item}"`,
      );
    }
    return u.origin;
  });
};

export const CONFIG_SCHEMA = {
  PORT: { default: '3000', description: 'HTTP port', parse: int(0, 65535) },
  SERVICE_BASE_URL: {
    description: 'Public base URL of the API (default http://localhost:$PORT)',
    parse: optional(url('http:', 'https:')),
  },
  DATABASE_URL: {
    description: 'PostgreSQL URL; unset = embedded PGlite under SERVICE_DATA_DIR',
    parse: optional(url('postgres:', 'postgresql:')),
  },
  SERVICE_DATA_DIR: { default: './data', description: 'Embedded database, keys and local files', parse: str },
  REDIS_URL: {
    description: 'Redis URL; unset = in-process adapter, queue and rate limiter (one instance)',
    parse: optional(url('redis:', 'rediss:')),
  },
  SERVICE_REDIS_PREFIX: {
    default: 'chat:',
    description:
      'Prefix of every Redis key and channel (queues, presence, rate limits, Socket.IO), so several deployments can share one Redis',
    parse: (v) => {
      if (!/^[A-Za-z0-9_:.-]{1,64}$/.test(v))
        throw new ConfigValueError(`must be 1-64 letters, digits or _ : . -, got "${v}"`);
      return v;
    },
  },
  SERVICE_REDIS_ADAPTER: {
    default: 'classic',
    description:
      'How instances share Socket.IO fan-out through Redis: classic = one pub/sub channel every instance reads; sharded = Redis 7 sharded pub/sub (SPUBLISH), a channel per room, each instance subscribed only to the rooms it has sockets in. The same on every instance',
    parse: oneOf('classic', 'sharded'),
  },
  SERVICE_CORS_ORIGINS: {
    description:
      'Browser origins allowed to call REST and Socket.IO: comma list of scheme://host[:port], or * (development); unset = * embedded, none with DATABASE_URL',
    parse: origins,
  },
  SERVICE_ROLE: {
    default: 'all',
    description: 'all = API + workers; api = API only; worker = queue workers only',
    parse: oneOf('all', 'api', 'worker'),
  },
  SERVICE_DEMO: {
    description:
      'The demo app at /demo may mint user tokens for the development workspace (POST /demo/api/session, no credentials: development only); unset = on with the embedded database, off with DATABASE_URL',
    parse: optional(bool),
  },
  SERVICE_ADMIN_TOKEN: {
    description: 'Operator token for /v1/admin/*; unset = those routes are 404',
    parse: optional(str),
  },
  SERVICE_BOOTSTRAP_API_KEY: {
    description: 'Create a workspace with this pk_ key at start-up',
    parse: optional(str),
  },
  SERVICE_BOOTSTRAP_API_SECRET: { description: 'Its sk_ secret', parse: optional(str) },
  SERVICE_ENCRYPTION_KEY: {
    description: '32 bytes, base64: encrypts secrets at rest (required with DATABASE_URL)',
    parse: key32,
  },
  SERVICE_MAX_MESSAGE_SIZE_BYTES: {
    default: '8192',
    description: 'Max message content, UTF-8 bytes',
    parse: int(1, 200_000),
  },
  SERVICE_MAX_ATTACHMENT_SIZE_BYTES: {
    default: '10485760',
    description: 'Max attachment size',
    parse: int(1),
  },
  SERVICE_ALLOWED_ATTACHMENT_TYPES: {
    description: 'Comma list overriding the allowed MIME types',
    parse: list,
  },
  SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: {
    default: '60',
    description: 'Sends per user per minute',
    parse: int(1, 100_000),
  },
  SERVICE_SOCKET_EVENTS_PER_SECOND: {
    default: '20',
    description:
      "Client events per user per second on an instance (bursts of twice that), across the user's sockets; beyond it they are refused before any work",
    parse: int(1, 10_000),
  },
  SERVICE_SHUTDOWN_DELAY_SECONDS: {
    default: '0',
    description:
      'After SIGTERM, how long /readyz answers 503 while the instance still serves, before it stops taking work; for load balancers that learn of a shutdown only from /readyz (Kubernetes needs none: the preStop pause does it)',
    parse: int(0, 120),
  },
  SERVICE_SOCKETS_PER_USER: {
    default: '20',
    description: "A user's sockets per instance; a new one closes the oldest",
    parse: int(1, 10_000),
  },
  SERVICE_MAX_REQUESTS_IN_FLIGHT: {
    description:
      'Requests an instance works on at once; the others wait for a turn, taken by the workspaces round-robin; 0 = no bound; unset = 64 with DATABASE_URL, none embedded',
    parse: optional(int(0, 100_000)),
  },
  SERVICE_MAX_QUEUE_WAIT_MS: {
    default: '50',
    description:
      'How long a request may wait for a turn; then it is answered 503 UNAVAILABLE (Retry-After: 1)',
    parse: int(1, 60_000),
  },
  SERVICE_MAX_EVENT_LOOP_DELAY_MS: {
    description:
      "Event-loop delay (mean over 250 ms) above which an instance refuses new requests (503 UNAVAILABLE) of the workspaces that have their share of those in flight; 0 = off; unset = 200 with DATABASE_URL, off embedded (PGlite's queries run on the event loop)",
    parse: optional(int(0, 60_000)),
  },
  DATABASE_POOL_WAIT_MS: {
    default: '1000',
    description:
      'How long a request may wait for a PostgreSQL connection of the pool (20 per process); then it is answered 503 UNAVAILABLE',
    parse: int(100, 60_000),
  },
  SERVICE_WORKSPACE_REQUESTS_PER_SECOND: {
    default: '500',
    description:
      "Requests per second per workspace, across instances with REDIS_URL (429 RATE_LIMITED beyond); a workspace's own quota (PATCH /v1/admin/workspaces/{id}/quotas) wins",
    parse: int(1, 1_000_000),
  },
  SERVICE_WORKSPACE_CONCURRENT_REQUESTS: {
    default: '8',
    description:
      "Requests of one workspace an instance works on at once, and so its share of the instance's database connections; the next wait up to 5 s for a turn (429 RATE_LIMITED after); a workspace's own quota wins",
    parse: int(1, 100_000),
  },
  SERVICE_WORKSPACE_SOCKETS: {
    default: '10000',
    description:
      "Sockets of one workspace per instance (a new one is refused RATE_LIMITED beyond); a workspace's own quota wins",
    parse: int(1, 10_000_000),
  },
  SERVICE_EDIT_WINDOW_SECONDS: { description: 'Edit window; unset = unlimited', parse: optional(int(1)) },
  SERVICE_UNSEND_WINDOW_SECONDS: { description: 'Unsend window; unset = unlimited', parse: optional(int(1)) },
  SERVICE_STORAGE_DRIVER: { default: 'local', description: 'local | s3', parse: oneOf('local', 's3') },
  SERVICE_S3_PUBLIC_URL: {
    description: 'Public attachment base URL (default $SERVICE_BASE_URL/files/)',
    parse: optional(url('http:', 'https:')),
  },
  SERVICE_S3_BUCKET: { description: 'S3 bucket (driver s3)', parse: optional(str) },
  SERVICE_S3_REGION: { default: 'us-east-1', description: 'S3 region', parse: str },
  SERVICE_S3_ENDPOINT: {
    description: 'S3-compatible endpoint (MinIO, R2, ...)',
    parse: optional(url('http:', 'https:')),
  },
  SERVICE_S3_ACCESS_KEY_ID: { description: 'S3 access key id', parse: optional(str) },
  SERVICE_S3_SECRET_ACCESS_KEY: { description: 'S3 secret access key', parse: optional(str) },
  SERVICE_S3_FORCE_PATH_STYLE: { default: 'false', description: 'Path-style S3 URLs (MinIO)', parse: bool },
  SERVICE_PUSH_SERVICE_ACCOUNT_FILE: {
    description: 'Firebase service-account JSON; unset = push off',
    parse: optional(str),
  },
  SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    default: 'false',
    description: 'Allow webhook targets on private networks',
    parse: bool,
  },
  SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS: {
    default: '30,120,600,3600,21600',
    description: 'Retry delays',
    parse: schedule,
  },
  SERVICE_WEBHOOK_RETRY_JITTER: {
    default: '0.2',
    description: 'Relative jitter on retry delays',
    parse: num(0, 1),
  },
  SERVICE_WEBHOOK_TIMEOUT_MS: {
    default: '10000',
    description: 'Webhook request timeout',
    parse: int(100, 120_000),
  },
  SERVICE_WEBHOOK_AUTO_DISABLE_FAILURES: {
    default: '24',
    description: 'Consecutive failures before auto-disable',
    parse: int(1),
  },
  SERVICE_EVENT_RETENTION_DAYS: {
    default: '30',
    description: 'Days events are kept for sync',
    parse: int(1, 3650),
  },
  SERVICE_EXPORT_DOWNLOAD_TTL_SECONDS: {
    default: '900',
    description: 'How long a user export download_url stays valid (signed afresh on every GET)',
    parse: int(1, 7 * 86400),
  },
  SERVICE_SCHEDULER_INTERVAL_MS: {
    default: '1000',
    description:
      'How often each worker asks the database for due reminders and scheduled messages (one index probe per kind)',
    parse: int(100, 4_000),
  },
  SERVICE_ERASURE_BATCH_SIZE: {
    default: '500',
    description: 'Messages per transaction when a user is erased',
    parse: int(1, 10_000),
  },
  LOG_LEVEL: {
    default: 'info',
    description: 'fatal|error|warn|info|debug|trace|silent',
    parse: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
  },
} satisfies Record<string, VarSpec<unknown>>;

type Schema = typeof CONFIG_SCHEMA;
type Parsed = { [K in keyof Schema]: ReturnType<Schema[K]['parse']> };

export interface AppConfig extends Parsed {
  baseUrl: string;
  publicFilesUrl: string;
  embedded: boolean;
  /** SERVICE_CORS_ORIGINS with its default applied: `*` (any origin) or the allowed origins (maybe none). */
  corsOrigins: '*' | readonly string[];
  /** SERVICE_DEMO with its default applied: whether /demo may mint user tokens without credentials. */
  demoSignIn: boolean;
  /** SERVICE_MAX_REQUESTS_IN_FLIGHT with its default applied (0: no bound). */
  maxRequestsInFlight: number;
  /** SERVICE_MAX_EVENT_LOOP_DELAY_MS with its default applied (0: off). */
  maxEventLoopDelayMs: number;
}

export class ConfigError extends Error {}

/**
 * The process's environment over the variables of a `.env` file in the working directory, if there is
 * one (a variable set in the environment wins, as with dotenv). What `npm start` and the CLI read.
 */
export function environment(env: NodeJS.ProcessEnv = process.env, file = resolve('.env')): NodeJS.ProcessEnv {
  if (!existsSync(file)) return env;
  return { ...parseEnvFile(readFileSync(file)), ...env };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(CONFIG_SCHEMA) as [string, VarSpec<unknown>][]) {
    const raw = env[name] ?? spec.default ?? '';
    try {
      out[name] = spec.parse(raw);
    } catch (e) {
      problems.push(`${name} ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const parsed = out as Parsed;
  if (!problems.length) {
    if (parsed.DATABASE_URL && !parsed.SERVICE_ENCRYPTION_KEY) {
      problems.push(
        'SERVICE_ENCRYPTION_KEY is required when DATABASE_URL is set (32 bytes, base64, the same on every instance)',
      );
    }
    if (!!parsed.SERVICE_BOOTSTRAP_API_KEY !== !!parsed.SERVICE_BOOTSTRAP_API_SECRET) {
      problems.push('SERVICE_BOOTSTRAP_API_KEY and SERVICE_BOOTSTRAP_API_SECRET must be set together');
    }
    if (
      parsed.SERVICE_BOOTSTRAP_API_KEY &&
      !/^pk_[A-Za-z0-9_-]{8,}$/.test(parsed.SERVICE_BOOTSTRAP_API_KEY)
    ) {
      problems.push('SERVICE_BOOTSTRAP_API_KEY must look like pk_<at least 8 characters of [A-Za-z0-9_-]>');
    }
    if (
      parsed.SERVICE_BOOTSTRAP_API_SECRET &&
      !/^sk_[A-Za-z0-9_-]{16,}$/.test(parsed.SERVICE_BOOTSTRAP_API_SECRET)
    ) {
      problems.push(
        'SERVICE_BOOTSTRAP_API_SECRET must look like sk_<at least 16 characters of [A-Za-z0-9_-]>',
      );
    }
    if (parsed.SERVICE_STORAGE_DRIVER === 's3' && !parsed.SERVICE_S3_BUCKET) {
      problems.push('SERVICE_S3_BUCKET is required when SERVICE_STORAGE_DRIVER=s3');
    }
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  const baseUrl = (parsed.SERVICE_BASE_URL ?? `http://localhost:${parsed.PORT}`).replace(/\/+$/, '');
  const publicFilesUrl = parsed.SERVICE_S3_PUBLIC_URL ?? `${baseUrl}/files/`;
  const embedded = !parsed.DATABASE_URL;
  const corsOrigins = parsed.SERVICE_CORS_ORIGINS ?? (embedded ? '*' : []);
  const demoSignIn = parsed.SERVICE_DEMO ?? embedded;
  const maxRequestsInFlight = parsed.SERVICE_MAX_REQUESTS_IN_FLIGHT ?? (embedded ? 0 : 64);
  const maxEventLoopDelayMs = parsed.SERVICE_MAX_EVENT_LOOP_DELAY_MS ?? (embedded ? 0 : 200);
  return {
    ...parsed,
    baseUrl,
    publicFilesUrl,
    embedded,
    corsOrigins,
    demoSignIn,
    maxRequestsInFlight,
    maxEventLoopDelayMs,
  };
}
