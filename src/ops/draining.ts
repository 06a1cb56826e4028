import { Injectable } from '@nestjs/common';
import type { Server } from 'http';

/**
 * The first half of a graceful shutdown (SIGTERM, src/main.ts): the instance says it is not ready, so
 * that load balancers stop sending it work, then stops taking any, and lets what it already took finish
 * before the application closes (its hooks stop the publisher, the workers, Redis and the database).
 */
@Injectable()
export class Draining {
  private draining = false;
  private readonly stoppers: (() => void)[] = [];

  /** Shutting down: /readyz answers 503, and every answer closes its connection (keep-alive pools move on). */
  get active(): boolean {
    return this.draining;
  }

  begin(): void {
    this.draining = true;
  }

  /** Something to stop when the intake stops (the realtime gateway: its sockets). */
  onStopIntake(stop: () => void): void {
    this.stoppers.push(stop);
  }

  /**
   * No new connections; idle keep-alive connections closed, sockets told to go (they reconnect to another
   * instance); resolves once every request in flight has been answered.
   */
  stopIntake(server: Server): Promise<void> {
    this.begin();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const stop of this.stoppers) stop();
    return closed;
  }
}
