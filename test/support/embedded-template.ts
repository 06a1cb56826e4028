import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { openDatabase, runMigrations } from '../../src/infra/database/data-source.factory';

/**
 * npm test's global setup: migrates one in-memory PGlite and dumps its data directory to a file the
 * workers inherit (CHAT_TEST_PGLITE_TEMPLATE). Each test file's app then starts its own in-memory
 * database from that dump (`memory://<file>`) instead of running initdb and every migration again:
 * the boot that a loaded machine stretched to a minute. Built fresh on every run, so it never lags
 * behind the migrations.
 */
export default async function globalSetup(): Promise<void> {
  const handle = await openDatabase({ dataDir: 'memory://' });
  try {
    await runMigrations(handle);
    const dump = await handle.dump!();
    const dir = mkdtempSync(join(tmpdir(), 'chat-service-pglite-'));
    const file = join(dir, 'migrated.tar');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    process.env.CHAT_TEST_PGLITE_TEMPLATE = file;
  } finally {
    await handle.dataSource.destroy();
    await handle.closeEngine();
  }
}

export function removeTemplate(): void {
  const file = process.env.CHAT_TEST_PGLITE_TEMPLATE;
  if (file && existsSync(file)) rmSync(join(file, '..'), { recursive: true, force: true });
}
