import { Global, Module } from '@nestjs/common';
import { EventLogService } from './event-log.service';
import { EventLogReader } from './event-log.reader';
import { EventNotifier } from './event-notifier';
import { EventRetentionService } from './event-retention.service';

@Global()
@Module({ providers: [EventLogService, EventLogReader, EventNotifier, EventRetentionService], exports: [EventLogService, EventLogReader, EventNotifier] })
export class EventsModule {}
