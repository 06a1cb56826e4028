import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** Lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit: 1-32 characters. */
export const DEMO_USER_ID = /^[a-z0-9][a-z0-9._-]{0,31}$/;

export class DemoSessionDto {
  @IsString()
  @Matches(DEMO_USER_ID, {
    message:
      'user_id must be 1-32 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit',
  })
  user_id!: string;

  @IsOptional() @IsString() @MaxLength(64) name?: string;
}

export interface DemoSessionView {
  token: string;
  expires_at: string;
  user: { id: string; external_id: string; name: string | null };
  /** The channel every demo user joins on sign-in. */
  channel_id: string;
}
