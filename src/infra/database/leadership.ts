import { Injectable, Logger } from '@nestjs/common';
import { OwnConnection } from './own-connection';

/** How often an instance that does not lead asks for the lock (and a leader checks its session). */
const TICK_MS = 1_000;

/**
 * One instance at a time leads each background role that must run once (the realtime publisher, the
 * push relay, sweepers): the holder of a session-level advisory lock on the instance's own connection
 * (OwnConnection). A lock lives as long as its session, so an instance that crashes or is killed lets
 * go at once (its connection closes) and another takes over within TICK_MS, with no lease to run out;
 * and a lock is per database, so deployments that share a Redis never share a leader. Embedded there is
 * one process, which always leads.
 */
@Injectable()
export class Leadership {
  constructor(private readonly own: OwnConnection) {}

  /** A lease on `role`; `onChange` hears when this instance starts or stops leading it. */
  lease(role: string, onChange: (leading: boolean) => void = () => undefined): LeaderLease {
    return new LeaderLease(this.own, role, onChange);
  }
}

export class LeaderLease {
  private readonly logger = new Logger('Leadership');
  private started = false;
  private timer?: NodeJS.Timeout;
  private leading = false;
  private ticking: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;

  constructor(
    private readonly own: OwnConnection,
    private readonly role: string,
    private readonly onChange: (leading: boolean) => void,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    if (!this.own.available) return this.set(true);
    this.unsubscribe = this.own.onLost(() => this.set(false));
    const tick = () => {
      this.ticking = this.tick();
    };
    tick();
    this.timer = setInterval(tick, TICK_MS);
    this.timer.unref();
  }

  /** Stops asking and gives the lock up (if held), so another instance takes over at once. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    await this.ticking;
    const was = this.leading;
    this.set(false);
    if (was && this.own.available)
      await this.own.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, [this.role]).catch(() => undefined);
  }

  /** Leading: the session is still there (a statement answers). Not leading: try for the lock. */
  private async tick(): Promise<void> {
    try {
      if (this.leading) {
        await this.own.query('SELECT 1');
        return;
      }
      const [row] = await this.own.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS ok`, [
        this.role,
      ]);
      if (!row?.ok) return;
      if (this.started) this.set(true);
      else await this.own.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, [this.role]); // stopped meanwhile
    } catch (e) {
      // the session is gone (OwnConnection told every lease) or could not be made: ask again next tick
      this.logger.debug(`${this.role}: ${String(e)}`);
    }
  }

  private set(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.logger.log(`${leading ? 'leading' : 'no longer leading'} ${this.role}`);
    this.onChange(leading);
  }
}

/** The lock of a role, in a key space of its own (channel order locks hash channel ids with seed 7243: CHANNEL_ORDER_LOCK_SEED). */
const LOCK_KEY = `hashtextextended('leader:' || $1::text, 7244)`;
