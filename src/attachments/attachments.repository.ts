import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface UploadRow {
  key: string;
  workspace_id: string;
  channel_id: string | null;
  user_id: string | null;
  filename: string;
  mime_type: string;
  size_bytes: number;
  driver: string;
  expires_at: Date;
  uploaded_at: Date | null;
  created_at: Date;
}

const COLUMNS = `key, workspace_id, channel_id, user_id, filename, mime_type, size_bytes::float8 AS size_bytes, driver, expires_at, uploaded_at, created_at`;

/** Presign records (`attachment_uploads`), one per generated key. */
@Injectable()
export class AttachmentsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(row: {
    key: string;
    workspaceId: string;
    channelId: string | null;
    userId: string | null;
    filename: string;
    mimeType: string;
    sizeBytes: number;
    driver: string;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.query(
      `INSERT INTO attachment_uploads (key, workspace_id, channel_id, user_id, filename, mime_type, size_bytes, driver, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        row.key,
        row.workspaceId,
        row.channelId,
        row.userId,
        row.filename,
        row.mimeType,
        row.sizeBytes,
        row.driver,
        row.expiresAt,
      ],
    );
  }

  /** A record of this workspace (another workspace's key is simply not found). */
  async find(
    workspaceId: string,
    key: string,
    m: EntityManager = this.db.manager,
  ): Promise<UploadRow | null> {
    const rows: UploadRow[] = await m.query(
      `SELECT ${COLUMNS} FROM attachment_uploads WHERE workspace_id = $1 AND key = $2`,
      [workspaceId, key],
    );
    return rows[0] ?? null;
  }

  /** By key alone: for serving `GET /files/<key>`, whose key names its workspace itself. */
  async findByKey(key: string): Promise<UploadRow | null> {
    const rows: UploadRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM attachment_uploads WHERE key = $1`,
      [key],
    );
    return rows[0] ?? null;
  }

  async markUploaded(key: string): Promise<void> {
    await this.db.query(`UPDATE attachment_uploads SET uploaded_at = now() WHERE key = $1`, [key]);
  }
}
