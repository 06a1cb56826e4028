import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, getSchemaPath, SwaggerModule } from '@nestjs/swagger';
import type {
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  ResponsesObject,
  SchemaObject,
} from '@nestjs/swagger';
import { SECURITY } from '../auth/auth.decorator';
import { ErrorResponseDto } from '../errors/error-response.dto';

/** Every tag a controller uses, in the order the reference shows them. */
export const API_TAGS: Record<string, string> = {
  users: 'Users of the workspace, their tokens, and erasure. Backend key.',
  channels: 'Channels as the backend manages them: no role checks. Backend key.',
  me: "The caller's own channels, with the role rules. User JWT.",
  messages: 'Sending, history, threads, editing and unsending.',
  reactions: 'One reaction per user and message.',
  receipts: 'Read and delivery cursors.',
  pins: 'Pinned messages.',
  threads: "Thread read state: a user's cursor per thread, unread replies, the caller's threads.",
  drafts: "The caller's drafts of channels and threads, synced across their devices. User JWT only.",
  reminders:
    "A user's reminders about messages: saved for later, or fired once at their time (socket event, push, webhook).",
  'scheduled-messages':
    "A user's messages sent later: kept until their time, seen by nobody else until then, then sent as normal sends.",
  previews: "Link previews: a page's title, description, image and site name, fetched safely and cached.",
  polls: 'Polls: messages of type poll, votes that replace, exact counts, closing by hand or at a set time.',
  search: 'Full-text search of messages.',
  sync: 'Catching up after a disconnect: events since a cursor.',
  attachments: 'Presigned uploads and the files they store.',
  devices: 'Push notification devices.',
  blocks: "The caller's blocks. User JWT.",
  mutes: 'Workspace-wide posting mutes. Backend key.',
  bans: 'Workspace and channel bans, shadow bans included.',
  flags: 'Reports of messages and users.',
  moderation: 'The flag review queue and the moderation audit trail. Backend key.',
  webhooks: 'Webhooks and their deliveries. Backend key.',
  exports: "Exports of a user's data. Backend key.",
  workspace: 'The calling workspace: settings and key rotation. Backend key.',
  admin: 'The operator API: workspaces. Operator token; 404 while SERVICE_ADMIN_TOKEN is unset.',
  operations: 'Liveness and readiness probes. No credentials.',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** The OpenAPI document of the running application (served at /docs-json). */
export function buildOpenApiDocument(
  app: INestApplication,
  opts: { version: string; serverUrl: string },
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('chat-service')
    .setDescription(
      'Hosted real-time chat back end. Backends call it with a workspace key pair (Bearer pk_…:sk_… or Basic); ' +
        "end users' apps call it with short-lived HS256 user JWTs. Errors always have the shape " +
        '{"error": {"code", "message", "details"?, "request_id"}} (the `Error` schema).',
    )
    .setVersion(opts.version)
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    .addServer(opts.serverUrl)
    // bearerFormat is only a hint, but DocumentBuilder defaults it to JWT: say what each token really is
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'pk_…:sk_…',
        description: 'Workspace key pair: `Bearer pk_…:sk_…`',
      },
      SECURITY.workspaceKey,
    )
    .addBasicAuth(
      { type: 'http', scheme: 'basic', description: 'Workspace key pair as HTTP Basic (pk_… / sk_…)' },
      SECURITY.workspaceBasic,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'User JWT (HS256, kid = api key, sub = external id)',
      },
      SECURITY.userJwt,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque',
        description: 'Operator token (SERVICE_ADMIN_TOKEN)',
      },
      SECURITY.adminToken,
    );
  for (const [name, description] of Object.entries(API_TAGS)) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build(), { extraModels: [ErrorResponseDto] });
  documentEdgeErrors(document);
  for (const op of operations(document)) {
    // @Auth('public') routes: say "no credentials" rather than leave it unsaid (the guard denies any
    // route without @Auth, so an operation without security is a public one)
    op.security ??= [];
  }
  unwrapSingleRefs(document.components?.schemas ?? {});
  return document;
}

function* operations(document: OpenAPIObject): Generator<OperationObject> {
  for (const item of Object.values<PathItemObject>(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) yield op;
    }
  }
}

/**
 * Nest renders a property of a named enum as `{allOf: [{$ref}]}`; alone, that is just the `$ref`
 * (redocly: no-illogical-composition-keywords). Wrappers that carry more (nullable, a description) stay.
 */
function unwrapSingleRefs(schemas: Record<string, SchemaObject | ReferenceObject>): void {
  for (const schema of Object.values(schemas)) {
    if (!('properties' in schema) || !schema.properties) continue;
    for (const [name, prop] of Object.entries(schema.properties)) {
      const keys = Object.keys(prop);
      if (keys.length === 1 && 'allOf' in prop && prop.allOf?.length === 1)
        schema.properties[name] = prop.allOf[0]!;
    }
  }
}

/** A JSON request body goes through the body parser (signed uploads stream their bytes past it). */
function takesJson(op: OperationObject): boolean {
  const body = op.requestBody;
  return !!body && 'content' in body && 'application/json' in body.content;
}

/**
 * The errors every route can answer before or around its handler, from the global middleware of
 * createApp: 400 from input checks (a body that is not JSON, NUL bytes, nesting), 413/415 from body
 * parsing on routes that take a JSON body, 500 for a bug and 503 while the database or Redis is down
 * (not on the probes, which report that themselves).
 * A route's own description of a status (its @ApiErrors) is kept.
 */
export function documentEdgeErrors(document: OpenAPIObject): void {
  const error = { 'application/json': { schema: { $ref: getSchemaPath(ErrorResponseDto) } } };
  const add = (responses: ResponsesObject, status: number, description: string) => {
    if (!responses[status]) responses[status] = { description, content: error };
  };
  for (const op of operations(document)) {
    add(
      op.responses,
      400,
      'VALIDATION_ERROR: malformed input (a body that is not JSON, NUL characters, nesting too deep)',
    );
    if (takesJson(op)) {
      add(op.responses, 413, 'PAYLOAD_TOO_LARGE: a body over 256 KiB');
      add(
        op.responses,
        415,
        'UNSUPPORTED_MEDIA_TYPE: a body in an encoding or charset the server cannot read',
      );
    }
    add(op.responses, 500, 'INTERNAL: an unexpected error (never a stack trace or SQL)');
    // the probes answer for themselves (readyz documents its own 503)
    if (!op.tags?.includes('operations'))
      add(op.responses, 503, 'UNAVAILABLE: the database or Redis is down; Retry-After in seconds');
    // a client waits this long before trying again (rate limits, slow mode, a dependency away)
    for (const status of [429, 503]) {
      const res = op.responses[status] as ResponseObject | undefined;
      if (res && !('$ref' in res)) res.headers = { ...res.headers, 'Retry-After': RETRY_AFTER };
    }
  }
}

const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'integer', minimum: 1 },
};
