import { h } from './dom';
import { devSignIn, pastedSession, Session } from './session';

/**
 * The first-run page: what the demo is, and the two ways in. The development sign-in appears only when
 * the server offers it; pasting a token always works.
 */
export function firstRunPage(devSignInOn: boolean, onSession: (s: Session) => void): HTMLElement {
  const error = h('p', { class: 'form-error', role: 'alert', id: 'signin-error' });
  const fail = (e: unknown) => {
    error.textContent = e instanceof Error ? e.message : String(e);
  };

  const userInput = h('input', {
    id: 'signin-user',
    name: 'user_id',
    required: true,
    autocomplete: 'username',
    pattern: '[a-z0-9][a-z0-9._\\-]{0,31}',
    maxlength: 32,
    placeholder: 'ana',
    'aria-describedby': 'signin-user-help',
  });
  const nameInput = h('input', {
    id: 'signin-name',
    name: 'name',
    maxlength: 64,
    autocomplete: 'name',
    placeholder: 'Ana',
  });
  const devForm = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'dev-title',
      onsubmit: (e: Event) => {
        e.preventDefault();
        error.textContent = '';
        devSignIn(userInput.value.trim(), nameInput.value.trim()).then(onSession, fail);
      },
    },
    h('h2', { id: 'dev-title' }, 'Development sign-in'),
    h(
      'p',
      {},
      'This server runs with the development sign-in on (the default on the embedded database, or SERVICE_DEMO=true). ',
      'Pick any user id: the service creates the user in its development workspace, adds them to #general and ',
      'issues a token. The workspace secret stays on the server. Open a second window as another user to chat.',
    ),
    h('label', { for: 'signin-user' }, 'User id'),
    userInput,
    h('small', { id: 'signin-user-help' }, 'Lower-case letters, digits, ".", "_" or "-"; up to 32.'),
    h('label', { for: 'signin-name' }, 'Display name (optional)'),
    nameInput,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );

  const tokenInput = h('textarea', {
    id: 'token-input',
    name: 'token',
    rows: 3,
    required: true,
    spellcheck: 'false',
    'aria-describedby': 'token-help',
  });
  const tokenForm = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'token-title',
      onsubmit: (e: Event) => {
        e.preventDefault();
        error.textContent = '';
        try {
          onSession(pastedSession(tokenInput.value));
        } catch (err) {
          fail(err);
        }
      },
    },
    h('h2', { id: 'token-title' }, 'Sign in with a user token'),
    h(
      'p',
      { id: 'token-help' },
      'In production your backend issues user tokens: it calls ',
      h('code', {}, 'POST /v1/users/{external_id}/token'),
      ' with the workspace key (or signs an HS256 JWT with the workspace secret itself) and hands the token to the ',
      'signed-in user. Never put the workspace secret in a browser. Paste such a token here.',
    ),
    h('label', { for: 'token-input' }, 'User token (JWT)'),
    tokenInput,
    h('button', { type: 'submit' }, 'Use this token'),
  );

  return h(
    'main',
    { class: 'first-run' },
    h('h1', {}, 'chat-service demo'),
    h(
      'p',
      { class: 'lead' },
      'A small chat app built on @chat-service/client: channels with unread counts, realtime messages, replies, ',
      'mentions, reactions, threads, attachments and search.',
    ),
    error,
    devSignInOn
      ? devForm
      : h(
          'p',
          { class: 'note' },
          'The development sign-in is off on this server (it is on by default only on the embedded database; SERVICE_DEMO=true turns it on).',
        ),
    tokenForm,
  );
}
