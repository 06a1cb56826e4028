import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';

export class CreateWorkspaceDto {
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;
}

export class RotateSecretDto {
  /** How long the old key pair and tokens signed with the old secret keep working (0-86400 s). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86400)
  grace_seconds?: number;
}
