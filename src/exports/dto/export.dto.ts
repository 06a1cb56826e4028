import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { EXPORT_STATUSES, type ExportStatus } from '../exports.repository';

/** the answer to an export request. */
@ApiSchema({ name: 'ExportRequested' })
export class ExportRequestedDto {
  /** The export's id, for `GET /v1/exports/:id`. */
  id!: string;

  @ApiProperty({ enum: ['pending'] })
  status!: 'pending';
}

/** an export and, once it is ready, where to download its JSON document. */
@ApiSchema({ name: 'Export' })
export class ExportDto {
  id!: string;

  /** The exported user. */
  user_external_id!: string;

  @ApiProperty({ enum: EXPORT_STATUSES, enumName: 'ExportStatus' })
  status!: ExportStatus;

  /**
   * Ready exports only: an anonymous GET answers the JSON document (`application/json`). Valid
   * SERVICE_EXPORT_DOWNLOAD_TTL_SECONDS (15 minutes); every GET of the export signs a fresh one.
   */
  download_url?: string;

  /** Ready or failed exports: when the export (and its document) is deleted, 7 days after it finished. */
  expires_at?: string;

  created_at!: string;
}
