import { closeAllSockets } from '../support/socket';
import { abuse } from './abuse';
import { backupAndRestore } from './backup-restore';
import { loadShedding, workspaceFairness } from './overload';
import { postgresRestart } from './postgres-restart';
import { redisOutage } from './redis-outage';
import { FaultEnvironment, startEnvironment } from './support/processes';

/**
 * The fault-and-abuse suite (issue 11): PostgreSQL and Redis of its own on free ports, two API
 * instances (SERVICE_ROLE=api) and a worker of the built service on them, started once for the whole
 * suite (start-up is most of its cost on a busy machine). Each part leaves the environment recovered
 * (that is part of what it asserts); the abuse goes first, on instances that nothing else has strained,
 * and the backup and restore last.
 */
function inEnvironment(
  extraEnv: Record<string, string>,
  parts: ((environment: () => FaultEnvironment) => void)[],
): void {
  let env: FaultEnvironment | undefined;

  beforeAll(async () => {
    // the senders of the outage tests are not the abuse under test; the flood is held by the socket budget
    // webhooks to the tests' own receiver on 127.0.0.1
    env = await startEnvironment({
      SERVICE_RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ...extraEnv,
    });
  });
  afterAll(async () => {
    closeAllSockets();
    await env?.stop();
  });

  const environment = (): FaultEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  for (const part of parts) part(environment);
}

describe('faults and abuse', () => {
  // the backup goes last: it stops the services (the old cluster is "lost") and restores elsewhere
  inEnvironment({}, [abuse, workspaceFairness, loadShedding, redisOutage, postgresRestart, backupAndRestore]);
});

// the sharded Socket.IO adapter (SERVICE_REDIS_ADAPTER=sharded) resubscribes its rooms' channels after
// an outage: the same outage, the same guarantees
describe('faults with the sharded Redis adapter', () => {
  inEnvironment({ SERVICE_REDIS_ADAPTER: 'sharded' }, [redisOutage]);
});
