import { sign } from 'jsonwebtoken';
import request from 'supertest';
import { ADMIN_TOKEN, TestApp } from './app';

export type Agent = ReturnType<TestApp['http']>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A thin client that sets one Authorization header on every call. */
export class Client {
  constructor(
    private readonly t: TestApp,
    readonly authorization: string | null,
  ) {}

  req(method: Method, path: string, body?: unknown): request.Test {
    let r = this.t.http()[method](path);
    if (this.authorization) r = r.set('Authorization', this.authorization);
    if (body !== undefined) r = r.send(body as object);
    return r;
  }
  get(path: string) {
    return this.req('get', path);
  }
  post(path: string, body: unknown = {}) {
    return this.req('post', path, body);
  }
  put(path: string, body: unknown = {}) {
    return this.req('put', path, body);
  }
  patch(path: string, body: unknown = {}) {
    return this.req('patch', path, body);
  }
  delete(path: string, body?: unknown) {
    return this.req('delete', path, body);
  }
}

export interface TestUser {
  id: string;
  external_id: string;
  token: string;
  api: Client;
}

export interface TestWorkspace {
  id: string;
  apiKey: string;
  apiSecret: string;
  api: Client;
  user: (externalId: string, name?: string) => Promise<TestUser>;
  users: (...externalIds: string[]) => Promise<TestUser[]>;
}

export function userToken(apiKey: string, apiSecret: string, sub: string, ttl = 3600): string {
  const iat = Math.floor(Date.now() / 1000);
  return sign({ sub, iat, exp: iat + ttl }, apiSecret, { algorithm: 'HS256', keyid: apiKey });
}

export function admin(t: TestApp): Client {
  return new Client(t, `Bearer ${ADMIN_TOKEN}`);
}

/** A fresh workspace through the admin API, with helpers to make users that carry their own JWT. */
export async function newWorkspace(
  t: TestApp,
  name = `ws-${Math.random().toString(36).slice(2, 8)}`,
): Promise<TestWorkspace> {
  const res = await admin(t).post('/v1/admin/workspaces', { name });
  if (res.status !== 201) throw new Error(`setup: create workspace answered ${res.status} ${res.text}`);
  const {
    id,
    api_key: apiKey,
    api_secret: apiSecret,
  } = res.body as { id: string; api_key: string; api_secret: string };
  const api = new Client(t, `Bearer ${apiKey}:${apiSecret}`);
  const user = async (externalId: string, displayName?: string): Promise<TestUser> => {
    const r = await api.put(`/v1/users/${encodeURIComponent(externalId)}`, {
      name: displayName ?? externalId,
    });
    if (r.status !== 200 && r.status !== 201)
      throw new Error(`setup: upsert ${externalId} answered ${r.status} ${r.text}`);
    const token = userToken(apiKey, apiSecret, externalId);
    return {
      id: (r.body as { id: string }).id,
      external_id: externalId,
      token,
      api: new Client(t, `Bearer ${token}`),
    };
  };
  return {
    id,
    apiKey,
    apiSecret,
    api,
    user,
    users: async (...ids) => {
      const out: TestUser[] = [];
      for (const x of ids) out.push(await user(x));
      return out;
    },
  };
}
