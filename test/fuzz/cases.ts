import fc from 'fast-check';
import { DEVICE_PLATFORMS } from '../../src/push/dto/device.dto';
import { AUDIT_RULES, REVIEW_ACTIONS } from '../../src/moderation/moderation-audit.repository';
import { MESSAGE_TYPES } from '../../src/search/dto/search-query.dto';
import { WEBHOOK_EVENTS } from '../../src/webhooks/webhook-events';
import type { Operation, Parameter, Schema } from './openapi';
import {
  cursorLike,
  Gen,
  hostileString,
  hostileValue,
  RawNumber,
  refs,
  timeLike,
  userOrNot,
  uuidLike,
} from './values';
import { Ref, TOKEN_USERS, TokenUser } from './world';

/** Goes into a URL exactly as written (already percent-encoded, or deliberately not). */
export class RawText {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    return `raw(${JSON.stringify(this.text)})`;
  }
}

/** A user JWT built field by field; an undefined field gets its valid value when the request is made. */
export interface JwtSpec {
  alg?: Gen;
  /** 'KEY': the workspace's api key. */
  kid?: Gen;
  sub?: Gen;
  iat?: Gen;
  exp?: Gen;
  sign: 'secret' | 'none' | 'other';
}

export type AuthCase =
  | { kind: 'none' | 'workspaceKey' | 'workspaceBasic' | 'adminToken' }
  | { kind: 'userJwt'; user: TokenUser }
  | { kind: 'header'; value: string }
  | { kind: 'basic'; user: Gen; password: Gen }
  | { kind: 'jwt'; jwt: JwtSpec };

export type BodyCase =
  | { kind: 'none' }
  | { kind: 'json'; value: Gen }
  | { kind: 'raw'; contentType?: string; encoding?: string; text: string; latin1?: boolean };

export interface QueryPart {
  name: string;
  value?: Gen;
}

export interface Case {
  auth: AuthCase;
  path: Record<string, Gen>;
  /** Name as written (`limit`, `limit[]`, `limit[a]`) and value; no value: the bare name, no `=`. */
  query: QueryPart[];
  body: BodyCase;
}

// ---------------------------------------------------------------------------------------------------
// Valid values: from the schema, refined by what a field's name means in this API.

const channelRef = refs('channel.id', 'channel.external_id', 'direct.id');
const messageRef = refs('message.id', 'reply.id');
const userList = fc.array(userOrNot, { minLength: 1, maxLength: 3 });

/** Field names whose valid values the schema cannot tell (ids of real things, enums it does not list). */
const BODY_HINTS: Record<string, fc.Arbitrary<Gen>> = {
  user_external_id: userOrNot,
  created_by: userOrNot,
  external_id: userOrNot,
  member_external_ids: userList,
  mentions: userList,
  parent_id: messageRef,
  thread_id: messageRef,
  channel_id: channelRef,
  url: fc.constantFrom('http://127.0.0.1:9/fuzz', 'https://127.0.0.1:9/fuzz?x=1'),
  avatar_url: fc.constantFrom('https://example.invalid/a.png', 'http://example.invalid/'),
  attachment_url: fc.oneof(refs('attachment.url'), fc.constantFrom('https://elsewhere.invalid/x.png')),
  emoji: fc.oneof(refs('emoji'), fc.constantFrom('😀', '👍🏽', '❤️', 'x')),
  events: fc.subarray([...WEBHOOK_EVENTS], { minLength: 1 }),
  token: fc.stringMatching(/^[\x21-\x7e]{1,64}$/),
  platform: fc.constantFrom(...DEVICE_PLATFORMS),
  role: fc.constantFrom('admin', 'member'),
  action: fc.constantFrom(...REVIEW_ACTIONS),
  signing: fc.constantFrom('signing_secret', 'api_secret'),
  muted_until: fc.constantFrom<Gen>('2099-01-01T00:00:00.000Z', '2000-01-01T00:00:00Z', null),
  mime_type: fc.constantFrom('image/png', 'text/plain', 'application/pdf', 'IMAGE/PNG; charset=x'),
  filename: fc.constantFrom('a.png', 'report final.pdf', 'ünï.txt'),
  content: fc.string({ maxLength: 40 }),
  metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
};

/** Cursors of the two shapes the service issues (an id; an exact time and an id), naming nothing in particular. */
const wellFormedCursor = fc.oneof(
  fc.uuid({ version: 7 }).map((id) => Buffer.from(JSON.stringify([id])).toString('base64url')),
  fc
    .tuple(
      fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) }),
      fc.uuid({ version: 7 }),
    )
    .map(([d, id]) =>
      Buffer.from(JSON.stringify([d.toISOString().replace(/Z$/, '000Z'), id])).toString('base64url'),
    ),
);

const rfc3339 = fc
  .date({ noInvalidDate: true, min: new Date(0), max: new Date(4102444800000) })
  .map((d) => d.toISOString());

/** A query parameter the document describes as a cursor, a time, or either. */
function cursorOrTime(p: Parameter): fc.Arbitrary<Gen> | undefined {
  const d = p.description ?? '';
  const cursor = /cursor/i.test(d) || ['before', 'cursor', 'since'].includes(p.name);
  const time = /RFC 3339/.test(d);
  if (time && /cursor/i.test(d)) return fc.oneof(wellFormedCursor, rfc3339);
  if (time) return rfc3339;
  return cursor ? wellFormedCursor : undefined;
}

const QUERY_HINTS: Record<string, fc.Arbitrary<Gen>> = {
  include: fc.constantFrom('hidden', 'archived', 'hidden,archived'),
  user: userOrNot,
  member: userOrNot,
  user_external_id: userOrNot,
  channel: channelRef,
  status: fc.constantFrom('open', 'resolved', 'pending', 'failed', 'delivered', 'dead'),
  rule: fc.constantFrom(...AUDIT_RULES),
  has_attachment: fc.constantFrom('true', 'false'),
  q: fc.string({ minLength: 1, maxLength: 20 }),
  limit: fc.integer({ min: 1, max: 100 }).map(String),
  after_seq: fc.nat().map(String),
  messages: fc.constantFrom('keep', 'anonymize', 'delete'),
  type: fc.constantFrom(...MESSAGE_TYPES),
};

/** The signed query of a presigned upload or download: the real values, which the fuzzer then spoils. */
const UPLOAD_QUERY: Record<string, fc.Arbitrary<Gen>> = {
  sig: refs('upload.sig'),
  type: refs('upload.type'),
  size: refs('upload.size'),
  expires: refs('upload.expires'),
  name: fc.constantFrom('fuzz.png'),
};

/**
 * Who makes the request, which decides a few fields: backend keys must name the user they act for
 * (`user_external_id`), user tokens must not.
 */
export type Actor = 'backend' | 'user' | 'other';

/** Optional fields a valid request of this API almost always has (a message's content). */
const USUALLY_PRESENT = new Set(['content', 'emoji', 'name', 'url', 'events']);
const OMIT = Symbol('omit');

function fromSchema(s: Schema, name: string | undefined, depth: number, actor: Actor): fc.Arbitrary<Gen> {
  const hint = name !== undefined && !s.enum ? BODY_HINTS[name] : undefined;
  if (hint) return hint;
  if (s.enum?.length) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case undefined:
      return fc.string({ maxLength: 20 });
    case 'string':
      if (s.format === 'date-time') return rfc3339;
      if (s.format === 'uuid') return fc.uuid();
      return fc.string({
        minLength: s.minLength ?? 0,
        maxLength: Math.max(s.minLength ?? 0, Math.min(s.maxLength ?? 20, 20)),
      });
    case 'integer':
    case 'number':
      return fc.integer({ min: Math.max(s.minimum ?? -1000, -1e9), max: Math.min(s.maximum ?? 1000, 1e9) });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fromSchema(s.items ?? {}, undefined, depth + 1, actor), {
        minLength: s.minItems ?? 0,
        maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3)),
      });
    case 'object':
      if (s.properties && depth < 6) return objectOf(s, depth, actor);
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
    default:
      return fc.string({ maxLength: 20 });
  }
}

/** An object of the schema: its required fields, and each optional one now and then (a few, not all at once). */
function objectOf(s: Schema, depth: number, actor: Actor): fc.Arbitrary<Gen> {
  const required = new Set(s.required ?? []);
  const fields = Object.entries(s.properties ?? {}).flatMap(([k, v]): [string, fc.Arbitrary<Gen>][] => {
    const value = fromSchema(v, k, depth + 1, actor);
    if (required.has(k)) return [[k, value]];
    if (k === 'user_external_id' && actor !== 'other') return actor === 'backend' ? [[k, value]] : [];
    const [present, absent] = USUALLY_PRESENT.has(k) ? [6, 1] : [1, 2];
    return [
      [k, fc.oneof({ weight: absent, arbitrary: fc.constant(OMIT) }, { weight: present, arbitrary: value })],
    ];
  });
  return fc.tuple(...fields.map(([, arb]) => arb)).map((values) => {
    const out: Record<string, Gen> = {};
    values.forEach((v, i) => {
      if (v !== OMIT) out[fields[i]![0]] = v;
    });
    return out;
  });
}

// ---------------------------------------------------------------------------------------------------
// Mutations: one hostile change somewhere in an otherwise valid value.

type Step = string | number;

const DELETE = Symbol('delete');

const isNode = (v: Gen): v is Record<string, Gen> | Gen[] =>
  typeof v === 'object' && v !== null && !(v instanceof Ref) && !(v instanceof RawNumber);

function nodePaths(v: Gen, at: Step[] = [], out: Step[][] = []): Step[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => nodePaths(x, [...at, i], out));
  else if (isNode(v)) for (const [k, x] of Object.entries(v)) nodePaths(x, [...at, k], out);
  return out;
}

/** A copy of `v` with `f` applied at `path` (own properties only: a `__proto__` key stays a key). */
function updateAt(v: Gen, path: Step[], f: (node: Gen) => Gen): Gen {
  // `f` (and so `go`) may answer DELETE: the node is removed from its parent
  const go = (node: Gen, i: number): Gen => {
    if (i === path.length) return f(node);
    const step = path[i]!;
    if (Array.isArray(node)) {
      const copy = [...node];
      const next = go(node[step as number], i + 1);
      if (next === DELETE) copy.splice(step as number, 1);
      else copy[step as number] = next;
      return copy;
    }
    const copy: Record<string, Gen> = {};
    for (const [k, x] of Object.entries(node as Record<string, Gen>)) {
      if (k !== step) define(copy, k, x);
      else {
        const next = go(x, i + 1);
        if (next !== DELETE) define(copy, k, next);
      }
    }
    return copy;
  };
  const out = go(v, 0);
  return out === DELETE ? undefined : out;
}

function define(o: Record<string, Gen>, k: string, v: Gen): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

const extraKey = fc.oneof(
  fc.constantFrom(
    'unknown_field',
    '__proto__',
    'constructor',
    'id',
    'workspace_id',
    'system',
    'role',
    '\u0000',
    'k\ud800',
    '',
  ),
  fc.string({ maxLength: 10 }),
);

function mutate(valid: Gen): fc.Arbitrary<Gen> {
  const paths = nodePaths(valid);
  const inner = paths.filter((p) => p.length > 0);
  return fc.oneof(
    {
      weight: inner.length ? 1 : 0,
      arbitrary: fc
        .constantFrom(...(inner.length ? inner : [[]]))
        .map((p) => updateAt(valid, p, () => DELETE)),
    },
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...paths), hostileValue)
        .map(([p, h]) => updateAt(valid, p, () => h)),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...paths), extraKey, hostileValue).map(([p, k, h]) =>
        updateAt(valid, p, (node) => {
          if (!isNode(node) || Array.isArray(node)) return node;
          const copy = { ...node };
          define(copy, k, h);
          return copy;
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...paths), fc.constantFrom('array', 'object', 'twice', 'null'))
        .map(([p, how]) =>
          updateAt(valid, p, (node) =>
            how === 'array'
              ? [node]
              : how === 'object'
                ? { value: node }
                : how === 'twice'
                  ? [node, node]
                  : null,
          ),
        ),
    },
  );
}

// ---------------------------------------------------------------------------------------------------
// Bodies that are not JSON objects at all, or not what their headers say.

const hostileRawBody: fc.Arbitrary<BodyCase> = fc.oneof(
  fc
    .constantFrom(
      '',
      'null',
      '[]',
      '"x"',
      '123',
      'true',
      '{',
      '{"a":',
      '{"a":1,"a":2}',
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
      '{"content":"\\u0000"}',
      '{"content":"\\ud800"}',
      '{"name":"\\uDEAD","users":[{"external_id":"\\ud83d"}]}',
      "{'a':1}",
      '{"a":1}garbage',
      '\ufeff{}',
      '{"a":NaN}',
      '{"limit":1e999}',
      '{"ttl_seconds":-1e999,"grace_seconds":1e999}',
      '{"content":"x","metadata":{"a":1e999}}',
    )
    .map((text): BodyCase => ({ kind: 'raw', contentType: 'application/json', text })),
  fc.tuple(fc.constantFrom(33, 2_000, 20_000), fc.boolean()).map(([d, obj]): BodyCase => ({
    kind: 'raw',
    contentType: 'application/json',
    text: obj ? `${'{"a":'.repeat(d)}1${'}'.repeat(d)}` : `${'['.repeat(d)}${']'.repeat(d)}`,
  })),
  fc
    .tuple(
      fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/vnd.api+json',
        'application/json; charset=utf-8; x=\u00ff',
        '*/*',
      ),
      fc.constantFrom(
        '{"content":"x"}',
        'a=1&b=2',
        '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
      ),
    )
    .map(([contentType, text]): BodyCase => ({ kind: 'raw', contentType, text })),
  fc
    .tuple(
      fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'zstd', 'gzip, gzip', 'x-gzip', 'GZIP'),
      fc.constantFrom('{"content":"x"}', '\u001f\u008b\u0008'),
    )
    .map(([encoding, text]): BodyCase => ({
      kind: 'raw',
      contentType: 'application/json',
      encoding,
      text,
      latin1: true,
    })),
  fc
    .constantFrom('{"content":"\u00ff\u00fe"}', '\u00ff\u00fe{\u0000}', '{"a":"\u00c3\u0028"}')
    .map((text): BodyCase => ({ kind: 'raw', contentType: 'application/json', text, latin1: true })),
  fc.constantFrom(300_000).map((n): BodyCase => ({
    kind: 'raw',
    contentType: 'application/json',
    text: `{"content":"${'x'.repeat(n)}"}`,
  })),
);

/** A part of a request: a valid value, and values that spoil it. */
interface Part<T> {
  valid: fc.Arbitrary<T>;
  /** Undefined: nothing to spoil (a route without path parameters). */
  hostile?: fc.Arbitrary<T>;
  /** How often this part is the one spoiled. */
  weight: number;
}

function bodyPart(op: Operation, actor: Actor): Part<BodyCase> {
  if (!op.body) {
    return {
      valid: fc.constant<BodyCase>({ kind: 'none' }),
      hostile: fc.oneof(
        hostileValue.map((value): BodyCase => ({ kind: 'json', value })),
        hostileRawBody,
      ),
      weight: 1,
    };
  }
  const valid = fromSchema(op.body, undefined, 0, actor);
  return {
    valid: valid.map((value): BodyCase => ({ kind: 'json', value })),
    hostile: fc.oneof(
      { weight: 6, arbitrary: valid.chain(mutate).map((value): BodyCase => ({ kind: 'json', value })) },
      { weight: 2, arbitrary: hostileRawBody },
      { weight: 1, arbitrary: fc.constant<BodyCase>({ kind: 'none' }) },
    ),
    weight: 4,
  };
}

// ---------------------------------------------------------------------------------------------------
// Path and query parameters.

const rawSegment = fc
  .constantFrom(
    '%E0%A4%A',
    '%',
    '%ZZ',
    '%ED%A0%80',
    '%00',
    '%2F',
    'a/b',
    '..',
    '.',
    '%2e%2e',
    'a%2Fb',
    '%C0%AF',
    '%FF',
    '%EF%BF%BF',
    '%F4%90%80%80',
  )
  .map((t) => new RawText(t));

/** The real resource a path parameter names, by the segment before it: `/v1/webhooks/{id}` is a webhook. */
function pathTarget(op: Operation, name: string): fc.Arbitrary<Gen> {
  const before = op.path.split(`/{${name}}`)[0]!.split('/').pop();
  if (name === 'external_id') return userOrNot;
  if (name === 'emoji') return fc.oneof(refs('emoji'), fc.constantFrom('😀', '❤️'));
  if (name === 'token') return fc.oneof(refs('device.token'), fc.constantFrom('no-such-token'));
  if (name === 'key') return refs('upload.key');
  if (name === 'delivery_id') return refs('delivery.id');
  switch (before) {
    case 'workspaces':
      return refs('workspace.id');
    case 'channels':
      return channelRef;
    case 'messages':
      return messageRef;
    case 'webhooks':
      return refs('webhook.id');
    case 'exports':
      return refs('export.id');
    case 'erasures':
      return refs('erasure.id');
    case 'flags':
      return refs('flag.id');
    case undefined:
    default:
      return fc.string({ minLength: 1, maxLength: 20 });
  }
}

const hostilePathValue: fc.Arbitrary<Gen> = fc.oneof(
  { weight: 1, arbitrary: uuidLike },
  { weight: 3, arbitrary: hostileString(20_000) },
  { weight: 1, arbitrary: rawSegment },
);

/** One parameter spoiled at a time, the others naming real things. */
function spoilOne<T>(
  names: string[],
  valid: (name: string) => fc.Arbitrary<T>,
  hostile: (name: string) => fc.Arbitrary<T>,
) {
  return fc
    .constantFrom(...names)
    .chain((bad) =>
      fc.tuple(...names.map((n) => (n === bad ? hostile(n) : valid(n)))).map((vs) => ({ bad, vs })),
    );
}

function pathPart(op: Operation): Part<Record<string, Gen>> {
  const names = op.params.filter((p) => p.in === 'path').map((p) => p.name);
  const record = (vs: Gen[]) => Object.fromEntries(names.map((n, i) => [n, vs[i]]));
  const valid = fc.tuple(...names.map((n) => pathTarget(op, n))).map(record);
  if (!names.length) return { valid, weight: 0 };
  return {
    valid,
    hostile: spoilOne(
      names,
      (n) => pathTarget(op, n),
      () => hostilePathValue,
    ).map(({ vs }) => record(vs)),
    weight: 2,
  };
}

const hostileQueryValue: fc.Arbitrary<Gen> = fc.oneof(
  hostileString(20_000),
  fc.constantFrom(
    '-1',
    '0',
    '101',
    '1.5',
    '1e3',
    '0x10',
    ' 5',
    '5 ',
    '+5',
    '9007199254740993',
    '1e999',
    'NaN',
    'Infinity',
    'true',
  ),
  cursorLike,
  timeLike,
  rawSegment,
);

function queryPart(op: Operation, actor: Actor): Part<QueryPart[]> {
  const upload = op.path.startsWith('/v1/uploads/') || op.path.startsWith('/v1/downloads/');
  const params = op.params.filter((p) => p.in === 'query');
  const validValue = (p: Parameter): fc.Arbitrary<Gen> => {
    const schema = p.schema ?? {};
    return (
      (upload ? UPLOAD_QUERY[p.name] : undefined) ??
      (schema.enum ? undefined : (cursorOrTime(p) ?? QUERY_HINTS[p.name])) ??
      fromSchema(schema, p.name, 0, actor).map(String)
    );
  };
  const validOf = (p: Parameter): fc.Arbitrary<QueryPart[]> => {
    const one = validValue(p).map((value): QueryPart[] => [{ name: p.name, value }]);
    if (p.name === 'user_external_id' && actor !== 'other')
      return actor === 'backend' ? one : fc.constant([]);
    return p.required ? one : fc.oneof(fc.constant<QueryPart[]>([]), one);
  };
  const hostileOf = (p: Parameter): fc.Arbitrary<QueryPart[]> => {
    const value = fc.oneof(
      { weight: 1, arbitrary: validValue(p) },
      { weight: 3, arbitrary: hostileQueryValue },
    );
    return fc.oneof(
      { weight: 6, arbitrary: hostileQueryValue.map((v): QueryPart[] => [{ name: p.name, value: v }]) },
      {
        weight: 1,
        arbitrary: fc.tuple(value, value).map(([a, b]): QueryPart[] => [
          { name: p.name, value: a },
          { name: p.name, value: b },
        ]),
      },
      { weight: 1, arbitrary: value.map((v): QueryPart[] => [{ name: `${p.name}[]`, value: v }]) },
      { weight: 1, arbitrary: value.map((v): QueryPart[] => [{ name: `${p.name}[a]`, value: v }]) },
      { weight: 1, arbitrary: fc.constant<QueryPart[]>([{ name: p.name }]) },
      { weight: p.required ? 1 : 0, arbitrary: fc.constant<QueryPart[]>([]) },
    );
  };
  const extra: Parameter = { name: '(extra)', in: 'query' };
  const extraHostile = fc
    .tuple(
      fc.constantFrom('unknown', '__proto__', 'constructor', 'limit[$gt]', '\u0000', 'a\ud800', '', '&', '='),
      hostileQueryValue,
    )
    .map(([name, value]): QueryPart[] => [{ name, value }]);
  const all = [...params, extra];
  const byName = new Map(all.map((p) => [p.name, p]));
  return {
    valid: fc.tuple(...params.map(validOf)).map((parts) => parts.flat()),
    hostile: spoilOne(
      all.map((p) => p.name),
      (n) => (n === extra.name ? fc.constant<QueryPart[]>([]) : validOf(byName.get(n)!)),
      (n) => (n === extra.name ? extraHostile : hostileOf(byName.get(n)!)),
    ).map(({ vs }) => vs.flat()),
    weight: params.length ? 3 : 1,
  };
}

// ---------------------------------------------------------------------------------------------------
// Credentials: the right ones for the route, sometimes hostile ones.

const hostileHeader = fc.constantFrom(
  'Bearer',
  'Bearer ',
  'Basic',
  'Basic !!!!',
  `Basic ${Buffer.from('nocolon').toString('base64')}`,
  'Bearer pk_x',
  'Bearer pk_x:',
  'Bearer pk_:sk_',
  'Bearer a.b.c',
  'Bearer ..',
  `Bearer ${'x'.repeat(8_000)}`,
  'Digest x',
  'bearer\tx',
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbmEifQ.',
);

const jwtSpec: fc.Arbitrary<JwtSpec> = fc.record(
  {
    alg: fc.oneof(fc.constantFrom<Gen>('HS256', 'none', 'HS512', 'RS256', 'hs256'), hostileValue),
    kid: fc.oneof(fc.constant<Gen>('KEY'), hostileValue),
    sub: fc.oneof(userOrNot, hostileValue),
    iat: hostileValue,
    exp: hostileValue,
    sign: fc.constantFrom<JwtSpec['sign']>('secret', 'secret', 'none', 'other'),
  },
  { requiredKeys: ['sign'] },
);

function authPart(op: Operation): Part<AuthCase> {
  const right: AuthCase[] = [];
  for (const sc of op.schemes) {
    if (sc === 'userJwt') right.push(...TOKEN_USERS.map((user): AuthCase => ({ kind: 'userJwt', user })));
    else right.push({ kind: sc });
  }
  if (!right.length) right.push({ kind: 'none' });
  return {
    valid: fc.constantFrom(...right),
    hostile: fc.oneof(
      { weight: 1, arbitrary: hostileHeader.map((value): AuthCase => ({ kind: 'header', value })) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.oneof(fc.constant<Gen>('KEY'), hostileString(5_000)),
            fc.oneof(fc.constant<Gen>('SECRET'), hostileString(5_000)),
          )
          .map(([user, password]): AuthCase => ({ kind: 'basic', user, password })),
      },
      { weight: 2, arbitrary: jwtSpec.map((jwt): AuthCase => ({ kind: 'jwt', jwt })) },
      { weight: 1, arbitrary: fc.constant<AuthCase>({ kind: 'none' }) },
    ),
    weight: 1,
  };
}

function actorOf(a: AuthCase): Actor {
  if (a.kind === 'workspaceKey' || a.kind === 'workspaceBasic') return 'backend';
  return a.kind === 'userJwt' ? 'user' : 'other';
}

type Spoiled = 'none' | 'auth' | 'path' | 'query' | 'body' | 'all';

/**
 * One request to `op`: mostly a valid request with one part spoiled (the body, a query or path
 * parameter, the credentials), sometimes wholly valid, sometimes spoiled everywhere at once.
 */
export function caseOf(op: Operation): fc.Arbitrary<Case> {
  const auth = authPart(op);
  const actors: Actor[] = ['backend', 'user', 'other'];
  const partsFor = new Map(
    actors.map((a) => [a, { path: pathPart(op), query: queryPart(op, a), body: bodyPart(op, a) }]),
  );
  const sample = partsFor.get('other')!;
  const choices: { weight: number; arbitrary: fc.Arbitrary<Spoiled> }[] = [
    { weight: 4, arbitrary: fc.constant('none') },
    { weight: 1, arbitrary: fc.constant('auth') },
    { weight: 1, arbitrary: fc.constant('all') },
  ];
  for (const k of ['path', 'query', 'body'] as const) {
    if (sample[k].hostile && sample[k].weight > 0)
      choices.push({ weight: sample[k].weight, arbitrary: fc.constant(k) });
  }
  const pick = <T>(part: Part<T>, k: Spoiled, spoiled: Spoiled): fc.Arbitrary<T> => {
    if (spoiled === k && part.hostile) return part.hostile;
    if (spoiled === 'all' && part.hostile) return fc.oneof(part.valid, part.hostile);
    return part.valid;
  };
  return fc.oneof(...choices).chain((spoiled) =>
    pick(auth, 'auth', spoiled).chain((a) => {
      const parts = partsFor.get(actorOf(a))!;
      return fc
        .record({
          path: pick(parts.path, 'path', spoiled),
          query: pick(parts.query, 'query', spoiled),
          body: pick(parts.body, 'body', spoiled),
        })
        .map((rest): Case => ({ auth: a, ...rest }));
    }),
  );
}
