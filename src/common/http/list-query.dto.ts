import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** page size 1-100, default 50. */
export const LIMIT_PROPERTY = { type: 'integer', minimum: 1, maximum: 100, default: 50 } as const;

export class ListQueryDto {
  /** Page size, 1-100 (default 50). */
  @ApiPropertyOptional(LIMIT_PROPERTY)
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  /** The `next_cursor` of the previous page. */
  @IsOptional()
  @IsString()
  @MaxLength(512)
  before?: string;
}
