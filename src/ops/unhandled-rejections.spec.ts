import type { LoggerService } from '@nestjs/common';
import { Metrics } from './metrics';
import { unhandledRejectionHandler } from './unhandled-rejections';

function recorder() {
  const lines: { level: string; message: string }[] = [];
  const logger: LoggerService = {
    log: (message: string) => lines.push({ level: 'log', message }),
    warn: (message: string) => lines.push({ level: 'warn', message }),
    error: (message: string) => lines.push({ level: 'error', message }),
  };
  return { lines, logger };
}

const count = async (metrics: Metrics, kind: string) =>
  (await metrics.unhandledRejections.get()).values.find((v) => v.labels.kind === kind)?.value ?? 0;

describe('the unhandledRejection handler', () => {
  it('counts every rejection by kind; a dependency away is a warning at most every few seconds, anything else an error each time', async () => {
    const metrics = new Metrics();
    const { lines, logger } = recorder();
    const handle = unhandledRejectionHandler(logger, () => metrics);
    const redisAway = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
      code: 'ECONNREFUSED',
    });
    for (let i = 0; i < 5; i++) handle(redisAway);
    handle(new TypeError("Cannot read properties of undefined (reading 'id')"));
    handle('a string');
    expect(await count(metrics, 'dependency')).toBe(5);
    expect(await count(metrics, 'other')).toBe(2);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      expect.stringContaining("reading 'id'"),
      expect.stringContaining('a string'),
    ]);
  });

  it('works before the application (and its metrics) exist', () => {
    const { lines, logger } = recorder();
    expect(() => unhandledRejectionHandler(logger, () => undefined)(new Error('boom'))).not.toThrow();
    expect(lines).toHaveLength(1);
  });
});
