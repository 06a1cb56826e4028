import { clear } from './dom';
import { firstRunPage } from './first-run';
import { demoConfig, savedSession, saveSession, Session } from './session';
import { startChat } from './chat';

const root = document.getElementById('root')!;

async function boot(): Promise<void> {
  const session = savedSession();
  if (session) return open(session);
  const config = await demoConfig();
  clear(root, firstRunPage(config.dev_sign_in, open));
  document.getElementById(config.dev_sign_in ? 'signin-user' : 'token-input')?.focus();
}

function open(session: Session): void {
  saveSession(session);
  startChat(root, session, () => {
    saveSession(null);
    void boot();
  });
}

void boot();
