import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsOptionalNotNull } from '../../common/http/optional';
import {
  HOOK_ON_FAILURE,
  HOOK_TIMEOUT_MAX_MS,
  HOOK_TIMEOUT_MIN_MS,
  type HookOnFailure,
  LARGE_CHANNEL_THRESHOLD_MAX,
  LARGE_CHANNEL_THRESHOLD_MIN,
  MODERATION_ACTIONS,
  MODERATION_RULES,
  type ModerationAction,
  type ModerationRule,
} from '../workspace-settings';

@ApiSchema({ name: 'FloodSettingsPatch' })
export class FloodSettingsDto {
  @IsOptionalNotNull() @IsInt() @Min(1) @Max(1000) max_repeats?: number;
  @IsOptionalNotNull() @IsInt() @Min(1) @Max(86400) window_seconds?: number;
}

@ApiSchema({ name: 'AutoMuteSettingsPatch' })
export class AutoMuteSettingsDto {
  @IsOptionalNotNull() @IsBoolean() enabled?: boolean;
  @IsOptionalNotNull() @IsInt() @Min(1) @Max(1000) violations?: number;
  @IsOptionalNotNull() @IsInt() @Min(1) @Max(30 * 86400) window_seconds?: number;
  @IsOptionalNotNull() @IsInt() @Min(1) @Max(365 * 86400) duration_seconds?: number;
}

@ApiSchema({ name: 'ModerationSettingsPatch' })
export class ModerationSettingsDto {
  @IsOptionalNotNull() @IsBoolean() enabled?: boolean;

  /** Rules to apply: profanity, link, phone, flood. */
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(4)
  @IsIn(MODERATION_RULES, { each: true })
  rules?: ModerationRule[];

  /** flag (deliver and record), mask (replace matches with ***) or reject (422). */
  @IsOptionalNotNull() @IsIn(MODERATION_ACTIONS) action?: ModerationAction;

  /** Extra words for the profanity rule (whole words, case-insensitive). */
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(64, { each: true })
  blocklist?: string[];

  @IsOptionalNotNull() @ValidateNested() @Type(() => FloodSettingsDto) flood?: FloodSettingsDto;
  @IsOptionalNotNull() @ValidateNested() @Type(() => AutoMuteSettingsDto) auto_mute?: AutoMuteSettingsDto;
}

/** CONTRACT §27: a partial hook; merged into the current one (`url` is required when there is none). */
@ApiSchema({ name: 'PreSendHookSettingsPatch' })
export class PreSendHookSettingsDto {
  /** http(s), on an address the server may call (as webhook targets). */
  @IsOptionalNotNull() @IsString() @MinLength(1) @MaxLength(2048) url?: string;
  @IsOptionalNotNull() @IsBoolean() enabled?: boolean;
  /** 100..5000; default 1500. */
  @IsOptionalNotNull() @IsInt() @Min(HOOK_TIMEOUT_MIN_MS) @Max(HOOK_TIMEOUT_MAX_MS) timeout_ms?: number;
  /** What a failed call (an error, a timeout, an answer that is not a verdict) does: allow (default) or reject. */
  @IsOptionalNotNull() @IsIn(HOOK_ON_FAILURE) on_failure?: HookOnFailure;
}

/** A partial settings object; it is deep-merged into the current settings. */
@ApiSchema({ name: 'WorkspaceSettingsPatch' })
export class PatchWorkspaceSettingsDto {
  @IsOptionalNotNull() @IsBoolean() read_receipts_enabled?: boolean;
  @IsOptionalNotNull() @IsBoolean() system_messages_for_membership?: boolean;
  /** CONTRACT §29: channels with more members than this are large. */
  @IsOptionalNotNull()
  @IsInt()
  @Min(LARGE_CHANNEL_THRESHOLD_MIN)
  @Max(LARGE_CHANNEL_THRESHOLD_MAX)
  large_channel_threshold?: number;
  @IsOptionalNotNull()
  @ValidateNested()
  @Type(() => ModerationSettingsDto)
  moderation?: ModerationSettingsDto;
  /** CONTRACT §26: link previews (default true). */
  @IsOptionalNotNull() @IsBoolean() link_previews_enabled?: boolean;
  /** CONTRACT §27: the pre-send hook (merged into the current one); null removes it. */
  @ApiProperty({ type: PreSendHookSettingsDto, nullable: true, required: false })
  @ValidateIf((_o: object, v: unknown) => v !== undefined && v !== null)
  @ValidateNested()
  @Type(() => PreSendHookSettingsDto)
  pre_send_hook?: PreSendHookSettingsDto | null;
}

/** The effective settings of a workspace, as GET /v1/workspace and the settings PATCH answer them. */
@ApiSchema({ name: 'FloodSettings' })
export class FloodSettingsViewDto {
  max_repeats!: number;
  window_seconds!: number;
}

@ApiSchema({ name: 'AutoMuteSettings' })
export class AutoMuteSettingsViewDto {
  enabled!: boolean;
  violations!: number;
  window_seconds!: number;
  duration_seconds!: number;
}

@ApiSchema({ name: 'ModerationSettings' })
export class ModerationSettingsViewDto {
  enabled!: boolean;
  @ApiProperty({ enum: MODERATION_RULES, isArray: true })
  rules!: ModerationRule[];
  @ApiProperty({ enum: MODERATION_ACTIONS })
  action!: ModerationAction;
  blocklist!: string[];
  flood!: FloodSettingsViewDto;
  auto_mute!: AutoMuteSettingsViewDto;
}

@ApiSchema({ name: 'PreSendHookSettings' })
export class PreSendHookSettingsViewDto {
  url!: string;
  enabled!: boolean;
  timeout_ms!: number;
  @ApiProperty({ enum: HOOK_ON_FAILURE })
  on_failure!: HookOnFailure;
}

@ApiSchema({ name: 'WorkspaceSettings' })
export class WorkspaceSettingsDto {
  read_receipts_enabled!: boolean;
  system_messages_for_membership!: boolean;
  /** Channels with more members than this are large (CONTRACT §29); default 100. */
  large_channel_threshold!: number;
  moderation!: ModerationSettingsViewDto;
  /** CONTRACT §26: link previews (default true). */
  link_previews_enabled!: boolean;
  /** CONTRACT §27: the pre-send hook, or null. */
  @ApiProperty({ type: PreSendHookSettingsViewDto, nullable: true })
  pre_send_hook!: PreSendHookSettingsViewDto | null;
}
