import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DatabaseProbe } from '../infra/database/database-probe';
import { Auth } from '../common/auth/auth.decorator';
import { RedisService } from '../infra/redis/redis.module';
import { Draining } from './draining';
import { HealthDto, ReadinessDto } from './dto/health.dto';
import { Metrics } from './metrics';

@ApiTags('operations')
@Auth('public')
@Controller()
export class HealthController {
  constructor(
    private readonly probe: DatabaseProbe,
    private readonly redis: RedisService,
    private readonly metrics: Metrics,
    private readonly draining: Draining,
  ) {}

  /** The process is up. */
  @Get('healthz')
  @ApiOperation({ operationId: 'getHealth', summary: 'Liveness probe' })
  @ApiOkResponse({ type: HealthDto, description: 'The process is up' })
  healthz(): HealthDto {
    return { status: 'ok' };
  }

  /**
   * The database (asked over a connection of its own) and Redis, when configured, answer, and the
   * instance is not shutting down. 503 otherwise.
   */
  @Get('readyz')
  @ApiOperation({ operationId: 'getReadiness', summary: 'Readiness probe' })
  @ApiOkResponse({ type: ReadinessDto, description: 'Every dependency answers' })
  @ApiServiceUnavailableResponse({
    type: ReadinessDto,
    description: 'A dependency is down, or the instance is shutting down (Retry-After: 5)',
  })
  async readyz(@Res({ passthrough: true }) res: Response): Promise<ReadinessDto> {
    const database = (await this.probe.up()) ? 'up' : 'down';
    const redis = this.redis.enabled ? ((await this.redis.ping()) ? 'up' : 'down') : 'not configured';
    const ok = database === 'up' && redis !== 'down' && !this.draining.active;
    if (!ok) {
      res.status(503).setHeader('Retry-After', '5');
    }
    return { status: ok ? 'ok' : 'unavailable', checks: { database, redis } };
  }

  /** Prometheus metrics in the text exposition format. */
  @Get('metrics')
  @ApiOperation({ operationId: 'getMetrics', summary: 'Prometheus metrics' })
  @ApiOkResponse({
    description: 'The text exposition format',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  async metricsText(@Res() res: Response): Promise<void> {
    res.setHeader('Content-Type', this.metrics.registry.contentType);
    res.send(await this.metrics.scrape());
  }
}
