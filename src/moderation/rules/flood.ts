import { createHash } from 'crypto';
import { fold } from './fold';

/**
 * What makes two messages "the same text" for the `flood` rule: folded (case, NFKC), invisible format
 * characters (zero-width spaces and joiners) removed, whitespace runs collapsed and trimmed. Hashed, so
 * the counter key is short whatever the message. Null for a message without text (an attachment alone).
 */
export function floodFingerprint(content: string): string | null {
  const normalised = fold(content)
    .replace(/\p{Cf}/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (!normalised) return null;
  return createHash('sha256').update(normalised).digest('base64url').slice(0, 32);
}
