import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES, ErrorCode } from './app-error';

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  /** The offending field, e.g. `mentions[1]`. */
  field!: string;
  message!: string;
}

@ApiSchema({ name: 'ErrorBody' })
export class ErrorBodyDto {
  @ApiProperty({ enum: ERROR_CODES, enumName: 'ErrorCode' })
  code!: ErrorCode;

  /** Human readable. */
  message!: string;

  details?: ErrorDetailDto[];

  /** The request's `X-Request-Id`. */
  request_id!: string;
}

/** the one body of every error, REST and socket acknowledgements alike. */
@ApiSchema({ name: 'Error', description: 'the one body of every error.' })
export class ErrorResponseDto {
  error!: ErrorBodyDto;
}
