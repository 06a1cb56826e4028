import { Global, Module } from '@nestjs/common';
import { EventLogService } from './event-log.service';
import { EventLogReader } from './event-log.reader';
import { EventNotifier } from './event-notifier';
import { EventRetentionService } from './event-retention.service';
import { LogTail } from './log-tail';

@Global()
@Module({
  providers: [EventLogService, EventLogReader, EventNotifier, EventRetentionService, LogTail],
  exports: [EventLogService, EventLogReader, EventNotifier, LogTail],
})
export class EventsModule {}
