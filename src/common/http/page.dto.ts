import { ApiProperty } from '@nestjs/swagger';

/**
 * A keyset page: every list answers `{<items>, has_more, next_cursor}`. A page class
 * extends this and adds its items under their own name (`messages`, `channels`, …).
 */
export class PageDto {
  /** More items follow: pass `next_cursor` to get them. */
  has_more!: boolean;

  /** The cursor of the next page (`before`, or `cursor` for search); null when `has_more` is false. */
  @ApiProperty({ type: String, nullable: true })
  next_cursor!: string | null;
}
