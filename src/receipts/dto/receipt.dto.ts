import { IsOptional, IsString, Matches } from 'class-validator';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../users/dto/user.dto';

export class MarkDto {
  /** Backend keys name the user they act for. */
  @IsOptional()
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `user_external_id ${EXTERNAL_ID_RULE}` })
  user_external_id?: string;
}
