import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class ListQueryDto {
  /** Page size, 1-100 (default 50). */
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
