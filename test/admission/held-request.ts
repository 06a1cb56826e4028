import { group } from '../messages/helpers';
import type { TestWorkspace } from '../support/fixtures';
import { Receiver } from '../support/receiver';

/**
 * A send of one of `ws`'s users that stays in flight until `release()`: the workspace's pre-send hook (a
 * local receiver) holds its answer. Resolves once the hook was called, so the instance counts the send in
 * flight; `release` lets the hook allow it, answers the send's status and removes the hook. The user's
 * token is seen accepted first, so the send takes the workspace's turns.
 */
export async function holdOne(ws: TestWorkspace): Promise<{ release: () => Promise<number> }> {
  const rx = await Receiver.start();
  let answer!: () => void;
  const until = new Promise<void>((resolve) => (answer = resolve));
  const url = rx.url(() => ({ status: 200, body: JSON.stringify({ action: 'allow' }), until }), 'held');
  const settings = await ws.api.patch('/v1/workspace/settings', {
    pre_send_hook: { url, timeout_ms: 5000 },
  });
  if (settings.status !== 200) throw new Error(`setup: the hook answered ${settings.status}`);
  const id = Math.random().toString(36).slice(2);
  const [user] = await ws.users(`held-${id}`, `held-peer-${id}`);
  const ch = await group(ws, user!.external_id, [`held-peer-${id}`]);
  const seen = await user!.api.get(`/v1/channels/${ch.id}/messages`);
  if (seen.status !== 200) throw new Error(`setup: history answered ${seen.status}`);

  const sent = Promise.resolve(user!.api.post(`/v1/channels/${ch.id}/messages`, { content: 'held' }));
  await rx.waitFor(url);
  return {
    release: async () => {
      answer();
      const res = await sent;
      await ws.api.patch('/v1/workspace/settings', { pre_send_hook: null });
      await rx.close();
      return res.status;
    },
  };
}
