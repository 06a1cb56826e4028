import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsObject,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsOptionalNotNull } from '../../common/http/optional';
import { IsMetadata } from '../../common/http/metadata';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE } from '../../common/external-id';

export class UpsertUserDto {
  @IsOptional() @IsString() @MaxLength(200) name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  avatar_url?: string;

  /** Free-form JSON object, at most 4 KiB. */
  @IsOptional() @IsMetadata() metadata?: Record<string, unknown>;
}

export class BatchUserDto extends UpsertUserDto {
  @IsString()
  @Matches(EXTERNAL_ID_PATTERN, { message: `external_id ${EXTERNAL_ID_RULE}` })
  external_id!: string;
}

export class BatchUpsertUsersDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsObject({ each: true, message: 'each of users must be an object' })
  @ValidateNested({ each: true })
  @Type(() => BatchUserDto)
  users!: BatchUserDto[];
}

export class IssueTokenDto {
  /** Token lifetime, 60-86400 s (default 3600). */
  @IsOptionalNotNull() @IsInt() @Min(60) @Max(86400) ttl_seconds?: number;
}

/** A user of the workspace. */
@ApiSchema({ name: 'User' })
export class UserDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  external_id!: string;
  name!: string | null;
  avatar_url!: string | null;
  /** Free-form JSON object, at most 4 KiB; {} when none. */
  @ApiProperty({ type: 'object', additionalProperties: true, example: { plan: 'pro' } })
  metadata!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

@ApiSchema({ name: 'UserList' })
export class UserListDto {
  users!: UserDto[];
}

/** A user JWT issued by the service. */
@ApiSchema({ name: 'UserToken' })
export class UserTokenDto {
  /** HS256, kid = the workspace's api key, sub = the user's external id. */
  token!: string;
  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
}
