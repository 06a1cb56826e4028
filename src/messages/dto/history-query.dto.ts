import { IsOptional, IsString, MaxLength } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';

export class HistoryQueryDto extends ListQueryDto {
  /**
   * Catch-up: a history `next_cursor` or an RFC 3339 time. Answers the messages newer than it, oldest
   * first; page on with the returned `next_cursor` as `after` again. A time means "created later than
   * the time as shown", at millisecond precision: a message whose `created_at` prints as that time is
   * not returned (to miss nothing sent in the same millisecond, use a `next_cursor`).
   */
  @IsOptional() @IsString() @MaxLength(512) after?: string;
}
