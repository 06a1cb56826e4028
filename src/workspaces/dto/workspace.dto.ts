import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { PageDto } from '../../common/http/page.dto';
import { WorkspaceSettingsDto } from './workspace-settings.dto';
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

/** A workspace as GET /v1/workspace and the admin list show it. */
@ApiSchema({ name: 'Workspace' })
export class WorkspaceDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  name!: string;
  /** The current public key; null when the workspace has none in force. */
  api_key!: string | null;
  settings!: WorkspaceSettingsDto;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}

@ApiSchema({ name: 'WorkspacePage' })
export class WorkspaceListDto extends PageDto {
  workspaces!: WorkspaceDto[];
}

/** A new key pair: both values change. The secret is shown here only. */
@ApiSchema({ name: 'WorkspaceKeyPair' })
export class WorkspaceKeyPairDto {
  api_key!: string;
  api_secret!: string;
}

/** A new workspace with its first key pair; the secret is shown here only. */
@ApiSchema({ name: 'CreatedWorkspace' })
export class CreatedWorkspaceDto extends WorkspaceKeyPairDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  name!: string;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
}
