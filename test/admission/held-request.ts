import { request } from 'http';
import type { TestApp } from '../support/app';
import type { Client } from '../support/fixtures';

/**
 * A PUT of a user through `client` that stays in flight (admitted, its body not all sent) until
 * `release()` sends the rest; `release` answers its status. Resolves once the instance counts it in
 * flight (the instance's other requests are done).
 */
export async function holdOne(t: TestApp, client: Client): Promise<{ release: () => Promise<number> }> {
  const body = JSON.stringify({ name: 'held' });
  const req = request(`${t.baseUrl}/v1/users/held-${Math.random().toString(36).slice(2)}`, {
    method: 'PUT',
    headers: {
      authorization: client.authorization!,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    },
  });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 3));
  // admitted once the instance counts it in flight
  for (let i = 0; !/^chat_requests_in_flight [1-9]/m.test((await t.http().get('/metrics')).text); i++) {
    if (i > 200) throw new Error('the held request was never admitted');
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    release: () => {
      req.end(body.slice(3));
      return answered;
    },
  };
}
