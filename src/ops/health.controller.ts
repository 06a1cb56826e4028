import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DatabaseProbe } from '../infra/database/database-probe';
import { Auth } from '../common/auth/auth.decorator';
import { RedisService } from '../infra/redis/redis.module';
import { Metrics } from './metrics';

@ApiTags('operations')
@Auth('public')
@Controller()
export class HealthController {
  constructor(
    private readonly probe: DatabaseProbe,
    private readonly redis: RedisService,
    private readonly metrics: Metrics,
  ) {}

  /** The process is up. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /** The database (asked over a connection of its own) and Redis, when configured, answer. 503 otherwise. */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) res: Response) {
    const database = (await this.probe.up()) ? 'up' : 'down';
    const redis = this.redis.enabled ? ((await this.redis.ping()) ? 'up' : 'down') : 'not configured';
    const ok = database === 'up' && redis !== 'down';
    if (!ok) {
      res.status(503).setHeader('Retry-After', '5');
    }
    return { status: ok ? 'ok' : 'unavailable', checks: { database, redis } };
  }

  @Get('metrics')
  @ApiExcludeEndpoint()
  async metricsText(@Res() res: Response) {
    res.setHeader('Content-Type', this.metrics.registry.contentType);
    res.send(await this.metrics.registry.metrics());
  }
}
