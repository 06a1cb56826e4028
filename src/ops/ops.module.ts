import { Global, Module } from '@nestjs/common';
import { Draining } from './draining';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';

@Global()
@Module({ controllers: [HealthController], providers: [Metrics, Draining], exports: [Metrics, Draining] })
export class OpsModule {}
