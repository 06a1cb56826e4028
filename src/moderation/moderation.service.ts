import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { newId } from '../common/ids';
import { EventLogService } from '../events/event-log.service';
import { FlagsRepository } from '../flags/flags.repository';
import { MessageModeration, ModerationInput, ModerationVerdict } from '../messages/message-moderation';
import { MutesRepository } from '../mutes/mutes.repository';
import { MODERATION_RULES, ModerationRule, WorkspaceSettings } from '../workspaces/workspace-settings';
import { WorkspacesService } from '../workspaces/workspaces.service';
import { ModerationCounter } from './moderation-counter';
import { AuditAction, ModerationAuditRepository } from './moderation-audit.repository';
import type { Span } from './rules/fold';
import { floodFingerprint } from './rules/flood';
import { findLinks } from './rules/link';
import { findPhoneNumbers } from './rules/phone';
import { findProfanity } from './rules/profanity';
import { excerptAround, maskSpans } from './rules/spans';

type ModerationSettings = WorkspaceSettings['moderation'];

/** One rule that matched, with what it matched (the whole text for `flood`). */
interface Finding {
  rule: ModerationRule;
  spans: Span[];
}

/** An audit row and its `message.moderated` event, before the message id is known. */
interface Outcome {
  rule: ModerationRule;
  action: AuditAction;
  excerpt: string;
}

/**
 * Automatic moderation (SPEC.md, CONTRACT §4): the workspace's rules run on every send and edit by a
 * user; when one matches, the configured action applies (flag, mask or reject), every rule that acted is
 * written to the audit trail and announced by a `message.moderated` event, and the message counts as one
 * violation towards `auto_mute`. A flagged message is also filed in the flags review queue (CONTRACT §19).
 *
 * Counting (flood repeats, violations) happens here, before the message's transaction, since it may
 * talk to Redis. Audit rows, events and mutes are written with the message (`record`) or, on reject,
 * in a transaction of their own, so they never exist without what caused them.
 */
@Injectable()
export class ModerationService extends MessageModeration {
  constructor(
    private readonly db: DataSource,
    private readonly workspaces: WorkspacesService,
    private readonly counter: ModerationCounter,
    private readonly audit: ModerationAuditRepository,
    private readonly mutes: MutesRepository,
    private readonly events: EventLogService,
    private readonly flags: FlagsRepository,
  ) {
    super();
  }

  async evaluate(input: ModerationInput): Promise<ModerationVerdict> {
    const settings = (await this.workspaces.settings(input.workspaceId)).moderation;
    if (!settings.enabled || !settings.rules.length) return { content: input.content };

    const findings = await this.findings(input, settings);
    if (!findings.length) return { content: input.content };

    const action = settings.action;
    const outcomes: Outcome[] = findings.map((f) => ({
      rule: f.rule,
      action,
      excerpt: excerptAround(input.content, f.spans[0]!),
    }));
    let muteSeconds: number | null = null;
    if (settings.auto_mute.enabled && (await this.violation(input, settings.auto_mute))) {
      muteSeconds = settings.auto_mute.duration_seconds;
      outcomes.push({ ...outcomes[0]!, action: 'auto_mute' });
    }
    const record = (m: EntityManager, messageId: string | null) =>
      this.record(m, input, outcomes, messageId, muteSeconds);

    switch (action) {
      case 'reject':
        // nothing of the message is stored; on an edit the message (unchanged) still exists
        await this.db.transaction((m) => record(m, input.kind === 'edit' ? (input.messageId ?? null) : null));
        throw new AppError('MESSAGE_REJECTED');
      case 'mask':
        return {
          content: maskSpans(
            input.content,
            findings.flatMap((f) => f.spans),
          ),
          record,
        };
      case 'flag':
        return { content: input.content, record };
    }
  }

  /** The configured rules that match, in the order of CONTRACT §4's list. */
  private async findings(input: ModerationInput, settings: ModerationSettings): Promise<Finding[]> {
    const enabled = new Set(settings.rules);
    const out: Finding[] = [];
    for (const rule of MODERATION_RULES) {
      if (!enabled.has(rule)) continue;
      const spans = await this.match(rule, input, settings);
      if (spans.length) out.push({ rule, spans });
    }
    return out;
  }

  private async match(
    rule: ModerationRule,
    input: ModerationInput,
    settings: ModerationSettings,
  ): Promise<Span[]> {
    const content = input.content;
    switch (rule) {
      case 'profanity':
        return findProfanity(content, settings.blocklist);
      case 'link':
        return findLinks(content);
      case 'phone':
        return findPhoneNumbers(content);
      case 'flood': {
        // an edit replaces a message's text, it does not add a message: only sends repeat
        const fingerprint = input.kind === 'send' ? floodFingerprint(content) : null;
        if (!fingerprint) return [];
        const { max_repeats: maxRepeats, window_seconds: windowSeconds } = settings.flood;
        const count = await this.counter.hit(
          `flood:${input.workspaceId}:${input.userId}:${fingerprint}`,
          windowSeconds * 1000,
        );
        return count > maxRepeats ? [{ start: 0, end: content.length }] : [];
      }
    }
  }

  /** Counts one violation; true when it is the one that reaches the threshold (the count then restarts). */
  private async violation(
    input: ModerationInput,
    autoMute: ModerationSettings['auto_mute'],
  ): Promise<boolean> {
    const count = await this.counter.hit(
      `violations:${input.workspaceId}:${input.userId}`,
      autoMute.window_seconds * 1000,
      autoMute.violations,
    );
    return count >= autoMute.violations;
  }

  private async record(
    m: EntityManager,
    input: ModerationInput,
    outcomes: readonly Outcome[],
    messageId: string | null,
    muteSeconds: number | null,
  ): Promise<void> {
    await this.audit.insert(
      m,
      outcomes.map((o) => ({
        id: newId(),
        workspaceId: input.workspaceId,
        channelId: input.channelId,
        channelExternalId: input.channelExternalId,
        userId: input.userId,
        messageId,
        rule: o.rule,
        action: o.action,
        excerpt: o.excerpt,
      })),
    );
    if (muteSeconds !== null) {
      const rule = outcomes[0]!.rule;
      await this.mutes.upsert(m, input.workspaceId, input.userId, muteSeconds, `auto_mute: ${rule}`);
    }
    for (const o of outcomes) {
      // workspace-scoped (no channelId): a webhook event only, it takes no channel seq
      await this.events.append(m, {
        workspaceId: input.workspaceId,
        type: 'message.moderated',
        payload: {
          channel_id: input.channelId,
          channel_external_id: input.channelExternalId,
          user_id: input.userId,
          ...(messageId ? { message_id: messageId } : {}),
          rule: o.rule,
          action: o.action,
          excerpt: o.excerpt,
        },
      });
    }
    const flagged = outcomes.filter((o) => o.action === 'flag');
    if (messageId && flagged.length) {
      // CONTRACT §19: the flag action also files the message in the review queue, as a flag by the system
      await this.flags.file(m, {
        workspaceId: input.workspaceId,
        target: { type: 'message', messageId, authorId: input.userId },
        byUser: null,
        reason: `automatic moderation: ${flagged.map((o) => o.rule).join(', ')}`,
      });
    }
  }
}
