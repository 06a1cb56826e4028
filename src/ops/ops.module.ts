import { Global, Module } from '@nestjs/common';
import { DependencyGauges } from './dependency-gauges';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';

@Global()
@Module({ controllers: [HealthController], providers: [Metrics, DependencyGauges], exports: [Metrics] })
export class OpsModule {}
