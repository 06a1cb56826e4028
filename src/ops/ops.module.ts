import { Global, Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { Metrics } from './metrics';

@Global()
@Module({ controllers: [HealthController], providers: [Metrics], exports: [Metrics] })
export class OpsModule {}
