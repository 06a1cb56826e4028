import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { PageDto } from '../../common/http/page.dto';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

export class BlockDto {
  /** The user to block (or unblock). */
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `external_id ${EXTERNAL_ID_RULE}` })
  external_id!: string;
}

/** A user the caller blocked. */
@ApiSchema({ name: 'Block' })
export class BlockViewDto {
  external_id!: string;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

@ApiSchema({ name: 'BlockPage' })
export class BlockPageDto extends PageDto {
  blocks!: BlockViewDto[];
}
