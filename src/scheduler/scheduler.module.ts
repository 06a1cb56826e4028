import { Global, Module } from '@nestjs/common';
import { Scheduler } from './scheduler.service';

/** The one durable scheduler (CONTRACT §25); features register their DueSource with it. */
@Global()
@Module({ providers: [Scheduler], exports: [Scheduler] })
export class SchedulerModule {}
