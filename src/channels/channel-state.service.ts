import { Injectable } from '@nestjs/common';
import type { UserPrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { parseRfc3339 } from '../common/rfc3339';
import { EventLogService } from '../events/event-log.service';
import { ChannelWrites } from './writes';
import { ChannelStatePatch, ChannelStateRepository } from './channel-state.repository';
import { FOREVER } from './channel-state.sql';
import { ChannelStateDto } from './dto/channel-state.dto';
import { MyChannelsService } from './my-channels.service';

/**
 * PATCH /v1/me/channels/:id/state (CONTRACT §18): the caller's own mute, hidden and archived state of a
 * channel; nobody else's view changes. The change and its `channel.state_changed` event commit together:
 * a workspace event (no channel seq: it is not the channel's history) whose audience is the caller, so
 * the realtime publisher sends it to the caller's own sockets on every instance and /v1/me/sync carries
 * it for the caller alone. It is not a webhook event.
 */
@Injectable()
export class ChannelStateService {
  constructor(
    private readonly writes: ChannelWrites,
    private readonly repo: ChannelStateRepository,
    private readonly events: EventLogService,
    private readonly mine: MyChannelsService,
  ) {}

  async set(p: UserPrincipal, ref: string, dto: ChannelStateDto) {
    const patch = patchOf(dto);
    const ctx = await this.writes.open(p, ref, 'set_user_state');
    if (Object.keys(patch).length) {
      // the channel's order lock: hiding reads the counters the send path advances under it
      await this.writes.write(ctx, async (s) => {
        const state = await this.repo.set(s.m, s.channel.id, p.userId, patch);
        if (!state) throw new AppError('NOT_A_MEMBER');
        await this.events.append(s.m, {
          workspaceId: p.workspaceId,
          type: 'channel.state_changed',
          payload: state,
          audience: [p.userId],
        });
      });
    }
    const view = await this.mine.one(p, ctx.channel.id);
    if (!view) throw new AppError('NOT_A_MEMBER'); // left meanwhile
    return view;
  }
}

/** The fields present, with muted_until as stored: `infinity` for "forever", else the time cut to the millisecond. */
function patchOf(dto: ChannelStateDto): ChannelStatePatch {
  const patch: ChannelStatePatch = {};
  if (dto.muted_until !== undefined) {
    if (dto.muted_until === null) patch.mutedUntil = null;
    else if (dto.muted_until === FOREVER) patch.mutedUntil = 'infinity';
    else {
      const instant = parseRfc3339(dto.muted_until);
      if (!instant)
        throw AppError.validation('muted_until', `must be an RFC 3339 time, "${FOREVER}" or null`);
      patch.mutedUntil = `${instant.utc.slice(0, 23)}Z`;
    }
  }
  if (dto.hidden !== undefined) patch.hidden = dto.hidden;
  if (dto.archived !== undefined) patch.archived = dto.archived;
  return patch;
}
