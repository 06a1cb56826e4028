import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min, ValidateIf } from 'class-validator';
import { QUOTA_BOUNDS } from '../workspace-quotas';

const { requests_per_second: RPS, concurrent_requests: CONCURRENT, sockets: SOCKETS } = QUOTA_BOUNDS;
const setOrNull = () => ValidateIf((_o: object, v: unknown) => v !== undefined && v !== null);

/** The quotas a workspace's requests and sockets meet; over one: 429 RATE_LIMITED with Retry-After. */
export class QuotaValuesDto {
  /** Requests per second, across instances (per instance while Redis is away). */
  @ApiProperty({ minimum: RPS.min, maximum: RPS.max, example: 500 })
  requests_per_second!: number;

  /** Requests in progress at once on one instance: the workspace's share of its database connections. */
  @ApiProperty({ minimum: CONCURRENT.min, maximum: CONCURRENT.max, example: 8 })
  concurrent_requests!: number;

  /** Sockets connected to one instance. */
  @ApiProperty({ minimum: SOCKETS.min, maximum: SOCKETS.max, example: 10000 })
  sockets!: number;
}

export class WorkspaceQuotasDto {
  /** The quotas in force: the workspace's own where set, else the instance's defaults (SERVICE_WORKSPACE_*). */
  @ApiProperty({ type: QuotaValuesDto })
  quotas!: QuotaValuesDto;

  /** The quotas set for this workspace; a quota absent here follows the default. */
  @ApiProperty({
    type: 'object',
    properties: {
      requests_per_second: { type: 'integer' },
      concurrent_requests: { type: 'integer' },
      sockets: { type: 'integer' },
    },
    additionalProperties: false,
    example: { requests_per_second: 50 },
  })
  overrides!: Partial<QuotaValuesDto>;
}

/** Each quota given is set for the workspace; null clears it (back to the default); absent ones stay. */
export class PatchWorkspaceQuotasDto {
  @ApiProperty({ type: 'integer', minimum: RPS.min, maximum: RPS.max, nullable: true, required: false })
  @setOrNull()
  @IsInt()
  @Min(RPS.min)
  @Max(RPS.max)
  requests_per_second?: number | null;

  @ApiProperty({
    type: 'integer',
    minimum: CONCURRENT.min,
    maximum: CONCURRENT.max,
    nullable: true,
    required: false,
  })
  @setOrNull()
  @IsInt()
  @Min(CONCURRENT.min)
  @Max(CONCURRENT.max)
  concurrent_requests?: number | null;

  @ApiProperty({
    type: 'integer',
    minimum: SOCKETS.min,
    maximum: SOCKETS.max,
    nullable: true,
    required: false,
  })
  @setOrNull()
  @IsInt()
  @Min(SOCKETS.min)
  @Max(SOCKETS.max)
  sockets?: number | null;
}
