import type { LoggerService } from '@nestjs/common';
import { toAppError } from '../common/errors/to-app-error';
import type { Metrics } from './metrics';

/** While a dependency stays away, its rejections are logged at most this often (each one is counted). */
const DEPENDENCY_LOG_INTERVAL_MS = 10_000;

/**
 * The process's `unhandledRejection` handler: a promise nobody handled is logged and counted
 * (`process_unhandled_rejections_total`), never fatal. Node's default (exit) turned a few seconds of Redis
 * away into every socket of the instance dropped (issue 11): a rejected promise that no one awaits has
 * left no half-done work behind, so the instance serves on. The kind `dependency` (the database or
 * Redis away, as toAppError sees it: UNAVAILABLE) is expected during an outage and logged at warn, at
 * most once per DEPENDENCY_LOG_INTERVAL_MS; anything else is a bug, logged at error every time.
 */
export function unhandledRejectionHandler(
  logger: LoggerService,
  metrics: () => Metrics | undefined,
): (reason: unknown) => void {
  let lastDependencyLog = 0;
  let unlogged = 0;
  return (reason: unknown) => {
    const dependency = toAppError(reason).error.code === 'UNAVAILABLE';
    metrics()?.unhandledRejections.inc({ kind: dependency ? 'dependency' : 'other' });
    const detail = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
    if (!dependency) {
      logger.error(`unhandled promise rejection: ${detail}`);
      return;
    }
    const now = Date.now();
    if (now - lastDependencyLog < DEPENDENCY_LOG_INTERVAL_MS) {
      unlogged++;
      return;
    }
    const more = unlogged ? ` (and ${unlogged} more since the last one logged)` : '';
    lastDependencyLog = now;
    unlogged = 0;
    logger.warn(
      `unhandled promise rejection, a dependency is away${more}: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
  };
}
