import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OWN_CONNECTION_TIMEOUT_MS, OwnConnection } from './own-connection';

/**
 * Whether the database answers, for /readyz. On PostgreSQL it asks over the instance's own connection
 * (OwnConnection), so a pool drained by busy requests (overload, which the instance sheds itself) is
 * not reported as a database that is down and makes no load balancer pull the instance. Embedded, the
 * one PGlite connection answers, within the same bound.
 */
@Injectable()
export class DatabaseProbe {
  constructor(
    private readonly db: DataSource,
    private readonly own: OwnConnection,
  ) {}

  async up(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), OWN_CONNECTION_TIMEOUT_MS);
    });
    const ask = (this.own.available ? this.own.query('SELECT 1') : this.db.query('SELECT 1')).then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([ask, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
