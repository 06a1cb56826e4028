import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../common/external-id';

/** Validates an external id taken from the path. */
@Injectable()
export class ExternalIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!EXTERNAL_ID_PATTERN.test(value)) throw AppError.validation('external_id', EXTERNAL_ID_RULE);
    return value;
  }
}
