import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppError } from '../common/errors/app-error';
import { iso, isoNotNull } from '../common/time';
import { UsersRepository } from '../users/users.repository';
import { MuteDto } from './dto/mute.dto';
import { MutesRepository } from './mutes.repository';

export interface MuteView {
  external_id: string;
  muted_until: string | null;
  reason: string | null;
  created_at: string;
}

@Injectable()
export class MutesService {
  constructor(
    private readonly db: DataSource,
    private readonly repo: MutesRepository,
    private readonly users: UsersRepository,
  ) {}

  async mute(workspaceId: string, externalId: string, dto: MuteDto): Promise<MuteView> {
    const user = await this.users.findByExternalId(workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    const row = await this.repo.upsert(
      this.db.manager,
      workspaceId,
      user.id,
      dto.duration_seconds ?? null,
      dto.reason ?? null,
    );
    return {
      external_id: user.external_id,
      muted_until: iso(row.until),
      reason: row.reason,
      created_at: isoNotNull(row.created_at),
    };
  }

  async unmute(workspaceId: string, externalId: string): Promise<void> {
    const user = await this.users.findByExternalId(workspaceId, externalId);
    if (!user) throw AppError.notFound('User');
    await this.repo.delete(this.db.manager, workspaceId, user.id);
  }
}
