import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { MODERATION_ACTIONS, MODERATION_RULES, type ModerationAction, type ModerationRule } from '../workspace-settings';

export class FloodSettingsDto {
  @IsOptional() @IsInt() @Min(1) @Max(1000) max_repeats?: number;
  @IsOptional() @IsInt() @Min(1) @Max(86400) window_seconds?: number;
}

export class AutoMuteSettingsDto {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsInt() @Min(1) @Max(1000) violations?: number;
  @IsOptional() @IsInt() @Min(1) @Max(30 * 86400) window_seconds?: number;
  @IsOptional() @IsInt() @Min(1) @Max(365 * 86400) duration_seconds?: number;
}

export class ModerationSettingsDto {
  @IsOptional() @IsBoolean() enabled?: boolean;

  /** Rules to apply: profanity, link, phone, flood. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(4)
  @IsIn(MODERATION_RULES, { each: true })
  rules?: ModerationRule[];

  /** flag (deliver and record), mask (replace matches with ***) or reject (422). */
  @IsOptional() @IsIn(MODERATION_ACTIONS) action?: ModerationAction;

  /** Extra words for the profanity rule (whole words, case-insensitive). */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(64, { each: true })
  blocklist?: string[];

  @IsOptional() @ValidateNested() @Type(() => FloodSettingsDto) flood?: FloodSettingsDto;
  @IsOptional() @ValidateNested() @Type(() => AutoMuteSettingsDto) auto_mute?: AutoMuteSettingsDto;
}

/** A partial settings object; it is deep-merged into the current settings. */
export class PatchWorkspaceSettingsDto {
  @IsOptional() @IsBoolean() read_receipts_enabled?: boolean;
  @IsOptional() @IsBoolean() system_messages_for_membership?: boolean;
  @IsOptional() @ValidateNested() @Type(() => ModerationSettingsDto) moderation?: ModerationSettingsDto;
}
