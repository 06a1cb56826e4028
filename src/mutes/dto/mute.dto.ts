import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const MAX_MUTE_SECONDS = 10 * 365 * 86400;

export class MuteDto {
  /** How long the mute lasts; omitted = until it is lifted. */
  @IsOptional() @IsInt() @Min(1) @Max(MAX_MUTE_SECONDS) duration_seconds?: number;

  @IsOptional() @IsString() @MaxLength(500) reason?: string;
}

/** A workspace-wide posting mute. */
@ApiSchema({ name: 'Mute' })
export class MuteViewDto {
  external_id!: string;
  /** null: until lifted */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  muted_until!: string | null;
  reason!: string | null;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}
