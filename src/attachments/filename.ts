/** Longest file name kept for display (code points); the key's copy is shorter. */
const DISPLAY_MAX = 200;
const KEY_MAX = 100;

export interface SafeFilename {
  /** What the attachment metadata shows: the base name without control, format or separator characters. */
  display: string;
  /** The last segment of the object key: letters, digits, marks, `.`, `-` and `_` only. */
  key: string;
}

/**
 * A client's file name made safe. Only the base name survives (anything up to the last `/` or `\` is
 * dropped, so `../../etc/passwd` is `passwd`); control characters, bidi overrides and zero-width
 * characters go; leading dots (hidden files, `..`) and trailing dots and spaces go. An empty result
 * becomes `file`. The key form also replaces everything outside a small, URL- and filesystem-safe
 * set with `_`, so a key can never hold a path, a `%` or a character a filesystem treats specially.
 */
export function sanitizeFilename(raw: string): SafeFilename {
  let name = raw.normalize('NFC').replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '');
  name = name.split(/[\\/]/).pop() ?? '';
  name = name
    .replace(/^[\s.]+/u, '')
    .replace(/[\s.]+$/u, '')
    .replace(/\s+/gu, ' ');
  const display = truncate(name, DISPLAY_MAX) || 'file';
  let key = display
    .replace(/[^\p{L}\p{N}\p{M}._-]+/gu, '_')
    .replace(/_+/g, '_')
    .replace(/^[._]+/, '');
  key = truncate(key, KEY_MAX).replace(/[._]+$/, '');
  return { display, key: key || 'file' };
}

/** Cuts to `max` code points, keeping a short extension. */
function truncate(name: string, max: number): string {
  const chars = [...name];
  if (chars.length <= max) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? [...name.slice(dot)] : [];
  if (ext.length > 1 && ext.length <= 16)
    return (
      chars
        .slice(0, max - ext.length)
        .join('')
        .replace(/[\s.]+$/u, '') + ext.join('')
    );
  return chars.slice(0, max).join('');
}
