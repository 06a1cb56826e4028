import fc from 'fast-check';
import { randomBytes, randomUUID } from 'crypto';
import { ADMIN_TOKEN } from '../support/app';
import { userToken } from '../support/fixtures';
import { rawRequest, RawResponse } from './raw-http';

/**
 * Names of real resources a generated request may point at. Generators produce `Ref`s, never the
 * values themselves: a case replays with the same meaning however often the world was rebuilt.
 */
export const REF_NAMES = [
  'workspace.id',
  'user.ana',
  'user.bo',
  'user.cy',
  'user.dee',
  'user.ana.id',
  'channel.id',
  'channel.external_id',
  'direct.id',
  'message.id',
  'reply.id',
  'emoji',
  'webhook.id',
  'delivery.id',
  'device.token',
  'flag.id',
  'export.id',
  'erasure.id',
  'upload.key',
  'upload.sig',
  'upload.type',
  'upload.size',
  'upload.expires',
  'attachment.url',
] as const;
export type RefName = (typeof REF_NAMES)[number];

export class Ref {
  constructor(readonly name: RefName) {}
  [fc.toStringMethod](): string {
    return `<${this.name}>`;
  }
}

export const ref = (name: RefName): Ref => new Ref(name);

/** The users a generated user JWT may belong to: ana is the group's admin, bo and cy members, dee an outsider. */
export const TOKEN_USERS = ['ana', 'bo', 'cy', 'dee'] as const;
export type TokenUser = (typeof TOKEN_USERS)[number];

interface Creds {
  workspaceId: string;
  apiKey: string;
  apiSecret: string;
}

type Values = Partial<Record<RefName, string>>;
type Group =
  | 'users'
  | 'channel'
  | 'message'
  | 'webhook'
  | 'delivery'
  | 'device'
  | 'flag'
  | 'export'
  | 'erasure'
  | 'upload';

const GROUP_OF: Record<RefName, Group | 'ws'> = {
  'workspace.id': 'ws',
  'user.ana': 'users',
  'user.bo': 'users',
  'user.cy': 'users',
  'user.dee': 'users',
  'user.ana.id': 'users',
  'channel.id': 'channel',
  'channel.external_id': 'channel',
  'direct.id': 'channel',
  'message.id': 'message',
  'reply.id': 'message',
  emoji: 'message',
  'webhook.id': 'webhook',
  'delivery.id': 'delivery',
  'device.token': 'device',
  'flag.id': 'flag',
  'export.id': 'export',
  'erasure.id': 'erasure',
  'upload.key': 'upload',
  'upload.sig': 'upload',
  'upload.type': 'upload',
  'upload.size': 'upload',
  'upload.expires': 'upload',
  'attachment.url': 'upload',
};

/** What else goes stale when a group's resource is deleted. */
const DEPENDENTS: Record<Group, Group[]> = {
  users: ['channel', 'message', 'delivery', 'device', 'flag', 'export', 'erasure', 'upload'],
  channel: ['message', 'delivery', 'flag', 'upload'],
  message: ['delivery', 'flag'],
  webhook: ['delivery'],
  delivery: [],
  device: [],
  flag: [],
  export: [],
  erasure: [],
  upload: [],
};

/**
 * A workspace with users, a group and a direct channel, messages, a webhook and its delivery, a device,
 * a flag, an export, an erasure and a presigned upload, each built the first time a case names it
 * (through the public API, as an integrator would). A case whose 2xx deleted something marks it stale;
 * a world whose set-up fails (the fuzzer froze the channel, banned ana, ...) starts over.
 */
export class World {
  private creds?: Promise<Creds>;
  private groups = new Map<Group, Promise<Values>>();
  /** Builds under way, as `group#n`. */
  private readonly building = new Set<string>();
  private seq = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly sql: (query: string, params: unknown[]) => Promise<unknown>,
  ) {}

  reset(): void {
    this.creds = undefined;
    this.groups.clear();
  }

  /** The set-up groups whose build has not settled (for a case that hangs). */
  pending(): string[] {
    return [...this.building];
  }

  async credentials(): Promise<Creds> {
    this.creds ??= this.createWorkspace();
    return this.creds;
  }

  /** A user JWT for one of the world's users, signed with the current secret. */
  async tokenFor(user: TokenUser): Promise<string> {
    await this.group('users');
    const c = await this.credentials();
    return userToken(c.apiKey, c.apiSecret, user);
  }

  async get(name: RefName): Promise<string> {
    const group = GROUP_OF[name];
    const values =
      group === 'ws' ? { 'workspace.id': (await this.credentials()).workspaceId } : await this.group(group);
    const v = values[name];
    if (v === undefined) throw new Error(`world: ${name} was not built`);
    return v;
  }

  /** After a case: a deleted resource (and what hangs off it) is rebuilt when next named; a rotation is followed. */
  afterAnswer(method: string, path: string, used: RefName[], res: RawResponse): void {
    if (res.status < 200 || res.status >= 300) return;
    if (method === 'post' && path === '/v1/workspace/rotate-secret') {
      const body = res.json as { api_key: string; api_secret: string };
      const old = this.creds;
      this.creds = old?.then((c) => ({ ...c, apiKey: body.api_key, apiSecret: body.api_secret }));
      return;
    }
    if (method !== 'delete') return;
    for (const name of used) {
      const group = GROUP_OF[name];
      if (group === 'ws') this.reset();
      else this.stale(group);
    }
  }

  private stale(group: Group): void {
    this.groups.delete(group);
    for (const g of DEPENDENTS[group]) this.groups.delete(g);
  }

  private group(group: Group): Promise<Values> {
    let p = this.groups.get(group);
    if (!p) {
      p = this.build(group).catch(async (err: unknown) => {
        // the fuzzer may have left this workspace unusable for set-up: start over in a fresh one, once
        this.reset();
        const again = this.build(group);
        this.groups.set(group, again);
        return again.catch((e: unknown) => {
          throw new Error(`world: building ${group} failed twice: ${String(err)} / ${String(e)}`);
        });
      });
      this.groups.set(group, p);
    }
    return p;
  }

  private async createWorkspace(): Promise<Creds> {
    const res = await this.call('post', '/v1/admin/workspaces', `Bearer ${ADMIN_TOKEN}`, {
      name: `fuzz-${randomBytes(3).toString('hex')}`,
    });
    const b = res.json as { id: string; api_key: string; api_secret: string };
    return { workspaceId: b.id, apiKey: b.api_key, apiSecret: b.api_secret };
  }

  private async backend(method: string, path: string, body?: unknown): Promise<RawResponse> {
    const c = await this.credentials();
    return this.call(method, path, `Bearer ${c.apiKey}:${c.apiSecret}`, body);
  }

  private async asUser(user: TokenUser, method: string, path: string, body?: unknown): Promise<RawResponse> {
    const c = await this.credentials();
    return this.call(method, path, `Bearer ${userToken(c.apiKey, c.apiSecret, user)}`, body);
  }

  private async call(
    method: string,
    path: string,
    authorization: string,
    body?: unknown,
  ): Promise<RawResponse> {
    const res = await rawRequest(this.baseUrl, {
      method: method.toUpperCase(),
      path,
      headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    });
    if (res.status >= 300)
      throw new Error(`${method.toUpperCase()} ${path} answered ${res.status} ${res.text.slice(0, 300)}`);
    return res;
  }

  private async build(group: Group): Promise<Values> {
    const label = `${group}#${this.seq + 1}`;
    this.building.add(label);
    try {
      return await this.buildGroup(group);
    } finally {
      this.building.delete(label);
    }
  }

  private async buildGroup(group: Group): Promise<Values> {
    const n = ++this.seq;
    switch (group) {
      case 'users': {
        const out: Values = {};
        for (const u of TOKEN_USERS) {
          const res = await this.backend('put', `/v1/users/${u}`, { name: u.toUpperCase() });
          out[`user.${u}`] = u;
          if (u === 'ana') out['user.ana.id'] = (res.json as { id: string }).id;
        }
        return out;
      }
      case 'channel': {
        await this.group('users');
        const groupCh = await this.backend('post', '/v1/channels', {
          type: 'group',
          external_id: `fuzz-${n}-${randomBytes(3).toString('hex')}`,
          name: 'Fuzz',
          created_by: 'ana',
          member_external_ids: ['bo', 'cy'],
        });
        const direct = await this.backend('post', '/v1/channels', {
          type: 'direct',
          member_external_ids: ['ana', 'bo'],
        });
        const ch = groupCh.json as { id: string; external_id: string };
        return {
          'channel.id': ch.id,
          'channel.external_id': ch.external_id,
          'direct.id': (direct.json as { id: string }).id,
        };
      }
      case 'message': {
        const channel = await this.get('channel.id');
        const root = await this.asUser('ana', 'post', `/v1/channels/${channel}/messages`, {
          content: `fuzz root ${n}`,
        });
        const id = (root.json as { id: string }).id;
        const reply = await this.asUser('bo', 'post', `/v1/channels/${channel}/messages`, {
          content: `fuzz reply ${n}`,
          thread_id: id,
        });
        await this.asUser('bo', 'post', `/v1/messages/${id}/reactions`, { emoji: '👍' });
        return { 'message.id': id, 'reply.id': (reply.json as { id: string }).id, emoji: '👍' };
      }
      case 'webhook': {
        // port 9 (discard) on loopback: deliveries fail fast and go nowhere
        const res = await this.backend('post', '/v1/webhooks', {
          url: 'http://127.0.0.1:9/fuzz',
          events: ['message.created'],
        });
        return { 'webhook.id': (res.json as { id: string }).id };
      }
      case 'delivery': {
        const webhook = await this.get('webhook.id');
        const channel = await this.get('channel.id');
        await this.backend('post', '/v1/messages', {
          channel_id: channel,
          content: `for the webhook ${n}`,
          user_external_id: 'ana',
        });
        for (let i = 0; i < 40; i++) {
          const list = await this.backend('get', `/v1/webhooks/${webhook}/deliveries?limit=1`);
          const first = (list.json as { deliveries?: { id: string }[] }).deliveries?.[0];
          if (first) return { 'delivery.id': first.id };
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('world: no webhook delivery appeared within 4 s');
      }
      case 'device': {
        await this.group('users');
        const token = `fuzz-device-${n}-${randomBytes(4).toString('hex')}`;
        await this.asUser('bo', 'post', '/v1/me/devices', { token, platform: 'android' });
        return { 'device.token': token };
      }
      case 'flag': {
        const message = await this.get('message.id');
        await this.asUser('cy', 'post', `/v1/messages/${message}/flag`, { reason: 'fuzz' });
        const queue = await this.backend('get', '/v1/moderation/flags?limit=1');
        const id = (queue.json as { flags?: { id: string }[] }).flags?.[0]?.id;
        if (!id) throw new Error(`world: the flag queue is empty: ${queue.text.slice(0, 200)}`);
        return { 'flag.id': id };
      }
      case 'export': {
        await this.group('users');
        const res = await this.backend('post', '/v1/users/cy/exports');
        return { 'export.id': (res.json as { id: string }).id };
      }
      case 'erasure': {
        // the API makes an erasure job only for users with over 1,000 messages: write a finished one
        const id = randomUUID();
        const c = await this.credentials();
        await this.sql(
          `INSERT INTO user_erasures (id, workspace_id, user_id, mode, status, finished_at) VALUES ($1, $2, $3, 'keep', 'done', now())`,
          [id, c.workspaceId, randomUUID()],
        );
        return { 'erasure.id': id };
      }
      case 'upload': {
        const channel = await this.get('channel.id');
        const res = await this.backend('post', '/v1/attachments/presign', {
          filename: 'fuzz.png',
          mime_type: 'image/png',
          size_bytes: 16,
          channel_id: channel,
        });
        const b = res.json as { upload_url: string; key: string; public_url: string };
        const url = new URL(b.upload_url);
        return {
          'upload.key': b.key,
          'upload.sig': url.searchParams.get('sig') ?? '',
          'upload.type': url.searchParams.get('type') ?? '',
          'upload.size': url.searchParams.get('size') ?? '',
          'upload.expires': url.searchParams.get('expires') ?? '',
          'attachment.url': b.public_url,
        };
      }
    }
  }
}
