import { IsOptional, IsString, MaxLength } from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';

export class HistoryQueryDto extends ListQueryDto {
  /**
   * Catch-up: a history `next_cursor` or an RFC 3339 time. Answers the messages newer than it, oldest
   * first; page on with the returned `next_cursor` as `after` again.
   */
  @IsOptional() @IsString() @MaxLength(512) after?: string;
}
