import { h, clear } from './dom';
import type { Session } from './session';

export function startChat(root: HTMLElement, session: Session, signOut: () => void): void {
  clear(
    root,
    h(
      'main',
      {},
      h('p', {}, `Signed in as ${session.userId}`),
      h('button', { onclick: signOut }, 'Sign out'),
    ),
  );
}
