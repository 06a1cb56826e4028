import { IsOptional, IsString, Matches } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';
import { IsReactionEmoji } from '../emoji';

export class ActAsDto {
  /** Backend keys only (and required there): the user who reacts. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}

export class AddReactionDto extends ActAsDto {
  /** A single emoji or a :shortcode:, 1-64 characters. */
  @IsString() @IsReactionEmoji() emoji!: string;
}
