import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { sha256Hex } from '../common/crypto';
import { Device } from './device.entity';
import type { DevicePlatform } from './dto/device.dto';

export interface DeviceRow {
  token: string;
  user_id: string;
  platform: DevicePlatform;
  created_at: Date;
  updated_at: Date;
}

/** Devices kept per user; registering one more forgets the least recently registered. */
export const MAX_DEVICES_PER_USER = 50;

function toRow(d: Device): DeviceRow {
  return {
    token: d.token,
    user_id: d.userId,
    platform: d.platform,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

/**
 * Push tokens (`devices`). Keyed by (workspace, SHA-256 of the token): a token can be 4 KiB long.
 * Listing and unregistering are plain CRUD through the entity's repository; registering (an upsert that
 * also trims the user's oldest devices) and the push fan-out's join stay SQL.
 */
@Injectable()
export class DevicesRepository {
  private readonly devices: Repository<Device>;

  constructor(private readonly db: DataSource) {
    this.devices = db.getRepository(Device);
  }

  /** Registers the token for the user; a token another user of the workspace had moves to this one. */
  async upsert(
    workspaceId: string,
    userId: string,
    token: string,
    platform: DevicePlatform,
  ): Promise<DeviceRow> {
    return this.db.transaction(async (m) => {
      const rows: DeviceRow[] = await m.query(
        `INSERT INTO devices (workspace_id, token_sha256, token, user_id, platform) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (workspace_id, token_sha256)
           DO UPDATE SET user_id = EXCLUDED.user_id, platform = EXCLUDED.platform, updated_at = now()
         RETURNING token, user_id, platform, created_at, updated_at`,
        [workspaceId, sha256Hex(token), token, userId, platform],
      );
      await m.query(
        `DELETE FROM devices WHERE user_id = $1 AND token_sha256 NOT IN (
           SELECT token_sha256 FROM devices WHERE user_id = $1 ORDER BY updated_at DESC, token_sha256 LIMIT $2)`,
        [userId, MAX_DEVICES_PER_USER],
      );
      return rows[0]!;
    });
  }

  async list(workspaceId: string, userId: string): Promise<DeviceRow[]> {
    const devices = await this.devices.find({
      where: { workspaceId, userId },
      order: { updatedAt: 'DESC', tokenSha256: 'ASC' },
    });
    return devices.map(toRow);
  }

  /** Removes the user's registration of the token (another user's registration is left alone). */
  async delete(workspaceId: string, userId: string, token: string): Promise<void> {
    await this.devices.delete({ workspaceId, tokenSha256: sha256Hex(token), userId });
  }

  /**
   * The devices a message's push goes to: every other member of the channel, except members who
   * block the sender and members who muted the channel for themselves (CONTRACT §18) unless the
   * message mentions them.
   */
  async recipientTokens(
    workspaceId: string,
    channelId: string,
    senderId: string,
    mentionedIds: string[] = [],
    m: EntityManager = this.db.manager,
  ): Promise<string[]> {
    const rows: { token: string }[] = await m.query(
      `SELECT d.token FROM channel_members cm
         JOIN devices d ON d.user_id = cm.user_id AND d.workspace_id = $1
        WHERE cm.channel_id = $2 AND cm.user_id <> $3
          AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = cm.user_id AND b.blocked_id = $3)
          AND (cm.muted_until IS NULL OR cm.muted_until <= now() OR cm.user_id = ANY($4::uuid[]))
        ORDER BY d.user_id, d.token_sha256`,
      [workspaceId, channelId, senderId, mentionedIds],
    );
    return rows.map((r) => r.token);
  }

  /** The user's own devices (a reminder's push: muted channels or not). */
  async userTokens(workspaceId: string, userId: string): Promise<string[]> {
    const rows: { token: string }[] = await this.db.query(
      `SELECT d.token FROM devices d WHERE d.workspace_id = $1 AND d.user_id = $2 ORDER BY d.token_sha256`,
      [workspaceId, userId],
    );
    return rows.map((r) => r.token);
  }

  /** Forgets tokens the push gateway reported as dead, whoever holds them now. */
  async deleteTokens(workspaceId: string, tokens: string[]): Promise<number> {
    if (!tokens.length) return 0;
    const rows: { token: string }[] = await this.db.query(
      `WITH d AS (DELETE FROM devices WHERE workspace_id = $1 AND token_sha256 = ANY($2::text[]) RETURNING token) SELECT token FROM d`,
      [workspaceId, tokens.map(sha256Hex)],
    );
    return rows.length;
  }
}
