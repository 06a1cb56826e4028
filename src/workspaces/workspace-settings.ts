/** Workspace settings of CONTRACT §4: stored as the integrator's overrides, read merged over these defaults. */
export type ModerationRule = 'profanity' | 'link' | 'phone' | 'flood';
export type ModerationAction = 'flag' | 'mask' | 'reject';

export const MODERATION_RULES: ModerationRule[] = ['profanity', 'link', 'phone', 'flood'];
export const MODERATION_ACTIONS: ModerationAction[] = ['flag', 'mask', 'reject'];

/** CONTRACT §29: a channel with more members than this is large. */
export const DEFAULT_LARGE_CHANNEL_THRESHOLD = 100;
export const LARGE_CHANNEL_THRESHOLD_MIN = 2;
export const LARGE_CHANNEL_THRESHOLD_MAX = 100_000;

/** CONTRACT §27: the pre-send hook's bounds and defaults. */
export const HOOK_TIMEOUT_MIN_MS = 100;
export const HOOK_TIMEOUT_MAX_MS = 5000;
export const HOOK_ON_FAILURE = ['allow', 'reject'] as const;
export type HookOnFailure = (typeof HOOK_ON_FAILURE)[number];

export interface PreSendHookSettings {
  url: string;
  enabled: boolean;
  timeout_ms: number;
  on_failure: HookOnFailure;
}

export const PRE_SEND_HOOK_DEFAULTS: Omit<PreSendHookSettings, 'url'> = {
  enabled: true,
  timeout_ms: 1500,
  on_failure: 'allow',
};

export interface WorkspaceSettings {
  read_receipts_enabled: boolean;
  system_messages_for_membership: boolean;
  large_channel_threshold: number;
  moderation: {
    enabled: boolean;
    rules: ModerationRule[];
    action: ModerationAction;
    blocklist: string[];
    flood: { max_repeats: number; window_seconds: number };
    auto_mute: { enabled: boolean; violations: number; window_seconds: number; duration_seconds: number };
  };
  /** CONTRACT §26: link previews (POST /v1/previews); true by default. */
  link_previews_enabled: boolean;
  /** CONTRACT §27: called for every user send when set and enabled; null by default. */
  pre_send_hook: PreSendHookSettings | null;
}

export function defaultSettings(): WorkspaceSettings {
  return {
    read_receipts_enabled: true,
    system_messages_for_membership: false,
    large_channel_threshold: DEFAULT_LARGE_CHANNEL_THRESHOLD,
    moderation: {
      enabled: false,
      rules: [...MODERATION_RULES],
      action: 'flag',
      blocklist: [],
      flood: { max_repeats: 3, window_seconds: 30 },
      auto_mute: { enabled: false, violations: 3, window_seconds: 3600, duration_seconds: 900 },
    },
    link_previews_enabled: true,
    pre_send_hook: null,
  };
}

type Json = Record<string, unknown>;
const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge: objects merge key by key, everything else (arrays included) replaces. */
export function deepMerge<T>(base: T, patch: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(patch)) return (patch === undefined ? base : patch) as T;
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k], v) : v;
  }
  return out as T;
}

export function effectiveSettings(stored: unknown): WorkspaceSettings {
  return deepMerge(defaultSettings(), isPlainObject(stored) ? stored : {});
}

/**
 * The SQL truth of "this channel is large" (CONTRACT §29), for a channel row `c` and its workspace's
 * stored settings `settings` (a jsonb expression): the same rule as `isLarge`.
 */
export function largeChannelSql(c: string, settings: string): string {
  return `(${c}.member_count > COALESCE((${settings}->>'large_channel_threshold')::integer, ${DEFAULT_LARGE_CHANNEL_THRESHOLD}))`;
}

/** A channel is large while its member count is above the workspace's threshold. */
export function isLarge(
  memberCount: number,
  settings: Pick<WorkspaceSettings, 'large_channel_threshold'>,
): boolean {
  return memberCount > settings.large_channel_threshold;
}
