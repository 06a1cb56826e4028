import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { DEVICE_TOKEN_PATTERN, DEVICE_TOKEN_RULE } from './dto/device.dto';

/** Validates a device token taken from the path. */
@Injectable()
export class DeviceTokenPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!DEVICE_TOKEN_PATTERN.test(value)) throw AppError.validation('token', DEVICE_TOKEN_RULE);
    return value;
  }
}
