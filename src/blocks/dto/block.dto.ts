import { IsString, Matches } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../users/dto/user.dto';

export class BlockDto {
  /** The user to block (or unblock). */
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `external_id ${EXTERNAL_ID_RULE}` })
  external_id!: string;
}
