import type { Message } from '@chat-service/client';
import { h } from './dom';

/** Text with each `@member` mention of a known member set apart (the content itself is never HTML). */
export function contentNodes(msg: Pick<Message, 'content' | 'mentions'>, me: string): Node[] {
  const names = new Set((msg.mentions ?? []).map((m) => m.external_id));
  if (!names.size) return [document.createTextNode(msg.content)];
  const out: Node[] = [];
  const re = /@([^\s@]+)/g;
  let at = 0;
  for (let m = re.exec(msg.content); m; m = re.exec(msg.content)) {
    const id = m[1]!.replace(/[.,!?;:]+$/, '');
    if (!names.has(id)) continue;
    if (m.index > at) out.push(document.createTextNode(msg.content.slice(at, m.index)));
    out.push(h('span', { class: id === me ? 'mention me' : 'mention' }, `@${id}`));
    at = m.index + 1 + id.length;
  }
  if (at < msg.content.length) out.push(document.createTextNode(msg.content.slice(at)));
  return out;
}

export function displayName(user: { external_id: string; name: string | null } | null | undefined): string {
  if (!user) return 'deleted user';
  return user.name || user.external_id;
}

export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The external ids `@mentioned` in a text that are members. */
export function mentionedIn(text: string, members: Iterable<string>): string[] {
  const found = new Set<string>();
  const known = new Set(members);
  for (const m of text.matchAll(/@([^\s@]+)/g)) {
    const id = m[1]!.replace(/[.,!?;:]+$/, '');
    if (known.has(id)) found.add(id);
  }
  return [...found];
}
