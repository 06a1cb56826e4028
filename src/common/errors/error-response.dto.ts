import { ApiProperty } from '@nestjs/swagger';
import { ERROR_CODES, ErrorCode } from './app-error';

export class ErrorDetailDto {
  /** The offending field, e.g. `mentions[1]`. */
  field!: string;
  message!: string;
}

export class ErrorBodyDto {
  @ApiProperty({ enum: ERROR_CODES, enumName: 'ErrorCode' })
  code!: ErrorCode;

  /** Human readable. */
  message!: string;

  details?: ErrorDetailDto[];

  /** The request's `X-Request-Id`. */
  request_id!: string;
}

/** CONTRACT §2: the one body of every error. */
export class ErrorResponseDto {
  error!: ErrorBodyDto;
}
