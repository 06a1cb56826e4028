/**
 * A chat flow as an integrator writes it against the TypeScript client generated from /docs-json
 * (@hey-api/openapi-ts into ./client). The OpenAPI test copies this file next to a freshly generated
 * client, type-checks it with `tsc --strict` and runs it against the service. It must need no casts,
 * no non-null assertions and no `any`: the generated types alone carry it.
 */
import { createClient } from './client/client/index.js';
import {
  addReaction,
  createChannel,
  getChannel,
  issueUserToken,
  listMessages,
  listMyChannels,
  markChannelRead,
  pinMessage,
  sendMessage,
  upsertUsers,
  type ErrorCode,
  type Message,
  type MyChannel,
  type ScheduledMessageAnswer,
} from './client/index.js';

/** A send answers a message, or with `scheduled_at` (not used here) a scheduled message: narrowed once. */
function sent(answer: Message | ScheduledMessageAnswer): Message {
  if ('scheduled_message' in answer)
    throw new Error('a send without scheduled_at answered a scheduled message');
  return answer;
}

export interface FlowOptions {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** The fetch the clients use (the test passes one that checks every answer against the document). */
  fetch?: typeof fetch;
}

export interface FlowResult {
  userIds: string[];
  channelId: string;
  memberCount: number;
  firstSendStatus: number;
  replayStatus: number;
  replayHeader: string | null;
  replayedId: string;
  history: Message[];
  reacted: Message;
  pinned: Message;
  boChannelsBefore: MyChannel[];
  boChannelsAfter: MyChannel[];
  lastReadAt: string;
  missingChannelStatus: number;
  missingChannelCode: ErrorCode | undefined;
}

export async function chatFlow(opts: FlowOptions): Promise<FlowResult> {
  // the backend: the workspace key pair as a bearer token
  const backend = createClient({
    baseUrl: opts.baseUrl,
    auth: `${opts.apiKey}:${opts.apiSecret}`,
    fetch: opts.fetch,
  });

  const { data: created } = await upsertUsers({
    client: backend,
    body: {
      users: [
        { external_id: 'ana', name: 'Ana' },
        { external_id: 'bo', name: 'Bo' },
      ],
    },
    throwOnError: true,
  });

  // each user's app gets a short-lived JWT the backend asks the service for
  const tokenOf = async (externalId: string): Promise<string> => {
    const { data } = await issueUserToken({
      client: backend,
      path: { external_id: externalId },
      body: { ttl_seconds: 600 },
      throwOnError: true,
    });
    return data.token;
  };
  const ana = createClient({ baseUrl: opts.baseUrl, auth: await tokenOf('ana'), fetch: opts.fetch });
  const bo = createClient({ baseUrl: opts.baseUrl, auth: await tokenOf('bo'), fetch: opts.fetch });

  const { data: channel } = await createChannel({
    client: backend,
    body: {
      type: 'group',
      external_id: 'launch',
      name: 'Launch',
      created_by: 'ana',
      member_external_ids: ['bo'],
    },
    throwOnError: true,
  });

  const firstSend = await sendMessage({
    client: ana,
    path: { id: channel.external_id },
    body: { content: 'Hello Bo', mentions: ['bo'], idempotency_key: 'hello-1' },
    throwOnError: true,
  });
  const first = { ...firstSend, data: sent(firstSend.data) };
  // a retry of the same send (a lost answer, say) gets the original message back
  const replay = await sendMessage({
    client: ana,
    path: { id: channel.external_id },
    body: { content: 'Hello Bo', mentions: ['bo'], idempotency_key: 'hello-1' },
    throwOnError: true,
  });
  await sendMessage({
    client: bo,
    path: { id: channel.id },
    body: { content: 'Hi Ana', parent_id: first.data.id },
    throwOnError: true,
  });

  const { data: page } = await listMessages({
    client: ana,
    path: { id: channel.id },
    query: { limit: 10 },
    throwOnError: true,
  });
  const { data: reacted } = await addReaction({
    client: bo,
    path: { id: first.data.id },
    body: { emoji: '🎉' },
    throwOnError: true,
  });
  const { data: pinned } = await pinMessage({ client: ana, path: { id: first.data.id }, throwOnError: true });

  const before = await listMyChannels({ client: bo, throwOnError: true });
  const { data: cursors } = await markChannelRead({
    client: bo,
    path: { id: channel.id },
    throwOnError: true,
  });
  const after = await listMyChannels({ client: bo, query: { limit: 20 }, throwOnError: true });

  // errors come back typed: the contract's error body
  const missing = await getChannel({ client: backend, path: { id: 'no-such-channel' } });

  return {
    userIds: created.users.map((u) => u.id),
    channelId: channel.id,
    memberCount: channel.member_count,
    firstSendStatus: first.response.status,
    replayStatus: replay.response.status,
    replayHeader: replay.response.headers.get('Idempotent-Replayed'),
    replayedId: sent(replay.data).id,
    history: page.messages,
    reacted,
    pinned,
    boChannelsBefore: before.data.channels,
    boChannelsAfter: after.data.channels,
    lastReadAt: cursors.last_read_at,
    missingChannelStatus: missing.response.status,
    missingChannelCode: missing.error?.error.code,
  };
}
