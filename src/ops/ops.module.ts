import { Global, Module } from '@nestjs/common';
import { DependencyGauges } from './dependency-gauges';
import { Draining } from './draining';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';

@Global()
@Module({
  controllers: [HealthController],
  providers: [Metrics, DependencyGauges, Draining],
  exports: [Metrics, Draining],
})
export class OpsModule {}
