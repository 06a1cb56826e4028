import { IsInt, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { IsOptionalNotNull } from '../../common/http/optional';

export class CreateWorkspaceDto {
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;
}

export class RotateSecretDto {
  /** How long the old key pair and tokens signed with the old secret keep working (0-86400 s). */
  @IsOptionalNotNull()
  @IsInt()
  @Min(0)
  @Max(86400)
  grace_seconds?: number;
}
