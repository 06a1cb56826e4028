import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsString, Matches } from 'class-validator';

export const DEVICE_PLATFORMS = ['ios', 'android', 'web'] as const;
export type DevicePlatform = (typeof DEVICE_PLATFORMS)[number];

/** FCM, APNs and web-push tokens: 1-4096 printable ASCII characters, no spaces. */
export const DEVICE_TOKEN_PATTERN = /^[\x21-\x7e]{1,4096}$/;
export const DEVICE_TOKEN_RULE = 'must be 1-4096 printable ASCII characters without spaces';

export class RegisterDeviceDto {
  /** The push token the platform's SDK handed the app (an FCM registration token). */
  @IsString() @Matches(DEVICE_TOKEN_PATTERN, { message: `token ${DEVICE_TOKEN_RULE}` }) token!: string;

  @IsIn(DEVICE_PLATFORMS) platform!: DevicePlatform;
}

@ApiSchema({ name: 'Device' })
export class DeviceDto {
  token!: string;
  @ApiProperty({ enum: DEVICE_PLATFORMS })
  platform!: DevicePlatform;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

@ApiSchema({ name: 'DeviceList' })
export class DeviceListDto {
  devices!: DeviceDto[];
}
