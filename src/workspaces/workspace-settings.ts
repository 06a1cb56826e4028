/** Workspace settings of CONTRACT §4: stored as the integrator's overrides, read merged over these defaults. */
export type ModerationRule = 'profanity' | 'link' | 'phone' | 'flood';
export type ModerationAction = 'flag' | 'mask' | 'reject';

export const MODERATION_RULES: ModerationRule[] = ['profanity', 'link', 'phone', 'flood'];
export const MODERATION_ACTIONS: ModerationAction[] = ['flag', 'mask', 'reject'];

export interface WorkspaceSettings {
  read_receipts_enabled: boolean;
  system_messages_for_membership: boolean;
  moderation: {
    enabled: boolean;
    rules: ModerationRule[];
    action: ModerationAction;
    blocklist: string[];
    flood: { max_repeats: number; window_seconds: number };
    auto_mute: { enabled: boolean; violations: number; window_seconds: number; duration_seconds: number };
  };
}

export function defaultSettings(): WorkspaceSettings {
  return {
    read_receipts_enabled: true,
    system_messages_for_membership: false,
    moderation: {
      enabled: false,
      rules: [...MODERATION_RULES],
      action: 'flag',
      blocklist: [],
      flood: { max_repeats: 3, window_seconds: 30 },
      auto_mute: { enabled: false, violations: 3, window_seconds: 3600, duration_seconds: 900 },
    },
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
