import { createServer, Server, Socket } from 'net';
import type { AppConfig } from '../../config/config.schema';
import { OwnConnection } from './own-connection';

describe('OwnConnection', () => {
  let server: Server;
  let accepted: Socket[];
  let port: number;

  // a server that takes connections and never answers: PostgreSQL hanging
  beforeEach(async () => {
    accepted = [];
    server = createServer((s) => accepted.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterEach(async () => {
    for (const s of accepted) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('statements waiting behind one whose connection could not be made fail with it, after one attempt', async () => {
    const own = new OwnConnection({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/x` } as AppConfig);
    const results = await Promise.allSettled([
      own.query('SELECT 1'),
      own.query('SELECT 2'),
      own.query('SELECT 3'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(accepted).toHaveLength(1);
    // a statement queued afterwards tries again
    await expect(own.query('SELECT 4')).rejects.toThrow();
    expect(accepted).toHaveLength(2);
    await own.beforeApplicationShutdown();
  }, 20_000);
});
