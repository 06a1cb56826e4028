import { Injectable, Logger } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Matches, validate } from 'class-validator';
import { DataSource } from 'typeorm';
import { CredentialsService } from '../auth/credentials.service';
import type { ChannelRow } from '../channels/channels.repository';
import { AppError } from '../common/errors/app-error';
import { EXTERNAL_ID_PATTERN } from '../common/external-id';
import { IsMetadata } from '../common/http/metadata';
import { newId } from '../common/ids';
import { SERVICE_VERSION } from '../common/version';
import type { MentionRef } from '../contract/events';
import { rows } from '../infra/database/sql';
import { SafeHttpClient } from '../infra/http-out/safe-http.client';
import { signedCallHeaders } from '../webhooks/webhook-signature';
import type { PreSendHookSettings } from '../workspaces/workspace-settings';
import { MAX_MENTIONS } from './dto/send-message.dto';

export const HOOK_USER_AGENT = `chat-service-hooks/${SERVICE_VERSION}`;
/** A rejection's reason as told to the sender (longer ones are cut). */
const MAX_REASON = 500;
/** How much of the hook's answer is read: a verdict is small. */
const ANSWER_BYTES = 64 * 1024;

/** The message as it would be stored, told to the hook. */
export interface HookedMessage {
  id: string;
  channel_id: string;
  channel_external_id: string;
  content: string;
  type: string;
  attachment_url: string | null;
  parent_id: string | null;
  thread_id: string | null;
  show_in_channel: boolean;
  mentions: MentionRef[];
  metadata: Record<string, unknown>;
}

/** What the hook decided: the send goes on unchanged, or with these fields replaced (to validate again). */
export type HookVerdict =
  | { action: 'allow' }
  | { action: 'modify'; content?: string; metadata?: Record<string, unknown>; mentions?: string[] };

/** The answer's shape: an action, and for `modify` the fields it may replace. */
class HookAnswer {
  @IsIn(['allow', 'reject', 'modify']) action!: 'allow' | 'reject' | 'modify';
  @IsOptional() @IsString() reason?: string;
  @IsOptional() message?: unknown;
}

class HookModification {
  @IsOptional() @IsString() content?: string;
  @IsOptional() @IsMetadata() metadata?: Record<string, unknown>;
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @IsString({ each: true })
  @Matches(EXTERNAL_ID_PATTERN, { each: true })
  mentions?: string[];
}

/**
 * The pre-send hook (CONTRACT §27): one signed, synchronous POST per send that calls it, over the
 * outbound client's kept-alive sockets and address policy, cut at the hook's `timeout_ms`. A `reject`
 * answer is MESSAGE_REJECTED with the reason; anything that is not a verdict follows `on_failure`.
 */
@Injectable()
export class PreSendHook {
  private readonly logger = new Logger('PreSendHook');

  constructor(
    private readonly db: DataSource,
    private readonly http: SafeHttpClient,
    private readonly credentials: CredentialsService,
  ) {}

  async call(
    hook: PreSendHookSettings,
    workspaceId: string,
    message: HookedMessage,
    userId: string,
    channel: ChannelRow,
  ): Promise<HookVerdict> {
    const [user] = await rows<{ id: string; external_id: string; name: string | null; metadata: unknown }>(
      this.db.manager,
      `SELECT id, external_id, name, metadata FROM users WHERE id = $1`,
      [userId],
    );
    const eventId = newId();
    const body = Buffer.from(
      JSON.stringify({
        id: eventId,
        type: 'message.pre_send',
        workspace_id: workspaceId,
        created_at: new Date().toISOString(),
        data: {
          message,
          user: user ?? null,
          channel: {
            id: channel.id,
            external_id: channel.external_id,
            type: channel.type,
            name: channel.name,
            member_count: channel.member_count,
            metadata: channel.metadata,
          },
        },
      }),
    );
    const secret = await this.credentials.currentSecret(workspaceId);
    const result = await this.http.post({
      url: hook.url,
      body,
      timeoutMs: hook.timeout_ms,
      keepBytes: ANSWER_BYTES,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': HOOK_USER_AGENT,
        ...signedCallHeaders(secret, 'message.pre_send', eventId, body),
      },
    });
    const verdict =
      result.kind === 'response' && result.status >= 200 && result.status < 300
        ? await verdictOf(result.body)
        : null;
    if (verdict === null) {
      const why = result.kind === 'error' ? result.error : `answered ${result.status}`;
      this.logger.warn(
        `pre-send hook of workspace ${workspaceId} failed (${why}): on_failure ${hook.on_failure}`,
      );
      return this.failed(hook);
    }
    if (verdict.action === 'reject') {
      const reason = verdict.reason?.trim().slice(0, MAX_REASON) || 'rejected';
      throw new AppError('MESSAGE_REJECTED', `The pre-send hook rejected the message: ${reason}`, [
        { field: 'pre_send_hook', message: reason },
      ]);
    }
    return verdict;
  }

  /** `on_failure`: allow stores the original, reject answers 422. */
  failed(hook: PreSendHookSettings): HookVerdict {
    if (hook.on_failure === 'allow') return { action: 'allow' };
    throw new AppError('MESSAGE_REJECTED', 'The pre-send hook is unavailable', [
      { field: 'pre_send_hook', message: 'unavailable' },
    ]);
  }
}

/** The answer as a verdict, or null when it is not one (not JSON, an unknown action, a malformed modification). */
async function verdictOf(text: string): Promise<HookVerdict | { action: 'reject'; reason?: string } | null> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const answer = plainToInstance(HookAnswer, parsed);
  if ((await validate(answer)).length) return null;
  if (answer.action === 'allow') return { action: 'allow' };
  if (answer.action === 'reject') return { action: 'reject', reason: answer.reason };
  const m = answer.message;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return null;
  const change = plainToInstance(HookModification, m);
  if ((await validate(change)).length) return null;
  return { action: 'modify', content: change.content, metadata: change.metadata, mentions: change.mentions };
}
