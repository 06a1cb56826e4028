import { Global, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { DatabaseHandle, openDatabase, runMigrations, checkTransactionCounter } from './data-source.factory';
import { DatabaseProbe } from './database-probe';
import { Leadership } from './leadership';
import { OwnConnection } from './own-connection';

export const DATABASE_HANDLE = Symbol('DATABASE_HANDLE');

@Injectable()
class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(@Inject(DATABASE_HANDLE) private readonly handle: DatabaseHandle) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.handle.dataSource.isInitialized) await this.handle.dataSource.destroy();
    await this.handle.closeEngine();
  }
}

@Global()
@Module({
  providers: [
    {
      provide: DATABASE_HANDLE,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<DatabaseHandle> => {
        const logger = new Logger('Database');
        const handle = await openDatabase({
          databaseUrl: config.DATABASE_URL,
          dataDir: config.SERVICE_DATA_DIR,
          poolWaitMs: config.DATABASE_POOL_WAIT_MS,
          holder: `server, SERVICE_ROLE=${config.SERVICE_ROLE}`,
        });
        const ran = await runMigrations(handle);
        await checkTransactionCounter(handle);
        if (ran.newer.length)
          logger.warn(
            `The database was migrated by a newer build (${ran.newer.length} migration(s) this build does not have, ` +
              `the newest ${ran.newer[ran.newer.length - 1]}): its SQL functions are left as that build wrote them`,
          );
        logger.log(
          `${handle.embedded ? 'embedded PGlite' : 'PostgreSQL'} ready, ${ran.migrations} migration(s) applied` +
            (ran.functions.length ? `, function(s) ${ran.functions.join(', ')} (re)created` : ''),
        );
        return handle;
      },
    },
    { provide: DataSource, inject: [DATABASE_HANDLE], useFactory: (h: DatabaseHandle) => h.dataSource },
    DatabaseLifecycle,
    OwnConnection,
    DatabaseProbe,
    Leadership,
  ],
  exports: [DataSource, DATABASE_HANDLE, DatabaseProbe, Leadership],
})
export class DatabaseModule {}
