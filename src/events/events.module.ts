import { Global, Module } from '@nestjs/common';
import { EventLogService } from './event-log.service';
import { EventLogReader } from './event-log.reader';
import { EventNotifier } from './event-notifier';
import { EventRetentionService } from './event-retention.service';
import { LogTail } from './log-tail';
import { PublishLedger } from './publish-notes';
import { LivePublish } from './live-publish';

@Global()
@Module({
  providers: [
    EventLogService,
    EventLogReader,
    EventNotifier,
    EventRetentionService,
    LivePublish,
    LogTail,
    PublishLedger,
  ],
  exports: [EventLogService, EventLogReader, EventNotifier, LivePublish, LogTail, PublishLedger],
})
export class EventsModule {}
