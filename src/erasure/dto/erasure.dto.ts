import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { ERASURE_MODES, type ErasureMode } from '../erasure.repository';

/** `DELETE /v1/users/:external_id?messages=…`. */
export class EraseUserQueryDto {
  /**
   * What happens to the messages the user wrote: `keep` (the default) keeps them with `user: null`;
   * `anonymize` blanks their content, attachment and metadata as an unsend does (each fires
   * `message.deleted`); `delete` removes them (each fires `message.deleted` with `removed: true`; a
   * thread root with other people's replies is blanked instead, so the thread stays readable).
   */
  @ApiPropertyOptional({ enum: ERASURE_MODES, enumName: 'ErasureMode', default: 'keep' })
  @IsOptional()
  @IsIn(ERASURE_MODES, { message: `messages must be one of ${ERASURE_MODES.join(', ')}` })
  messages?: ErasureMode;
}

/** 202: the user is gone already; a job erases their messages (more than 1,000). */
@ApiSchema({ name: 'ErasureAccepted' })
export class ErasureAcceptedDto {
  /** The erasure job, for `GET /v1/erasures/:id`. */
  job_id!: string;
}

/** An erasure's progress (`GET /v1/erasures/:id`). */
@ApiSchema({ name: 'Erasure' })
export class ErasureDto {
  /** The job id the erasure request answered with. */
  id!: string;

  /** `done` once the last of the user's messages, reactions and mentions went. */
  @ApiProperty({ enum: ['pending', 'done'], enumName: 'ErasureStatus' })
  status!: 'pending' | 'done';

  /** The `messages` mode it was asked for. */
  @ApiProperty({ enum: ERASURE_MODES, enumName: 'ErasureMode' })
  messages!: ErasureMode;

  /** Messages erased so far. */
  messages_done!: number;

  created_at!: string;

  /** When it was done; null while pending. */
  @ApiProperty({ type: String, nullable: true })
  finished_at!: string | null;
}
