import { Global, Module } from '@nestjs/common';
import { FlagQueueModule } from '../flags/flag-queue.module';
import { MessageModeration } from '../messages/message-moderation';
import { MutesRepositoryModule } from '../mutes/mutes-repository.module';
import { ModerationAuditRepository } from './moderation-audit.repository';
import { moderationCounterProvider } from './moderation-counter';
import { ModerationService } from './moderation.service';

/**
 * Automatic moderation's rule engine, without routes: binds the messages feature's `MessageModeration`
 * seam to it. Global and loaded in every role (a scheduled message is sent by the worker), so the
 * messages feature depends on its own seam and not on this one; FlagsModule writes the audit rows of
 * its resolutions through the exported repository. ModerationModule serves the audit trail.
 */
@Global()
@Module({
  imports: [MutesRepositoryModule, FlagQueueModule],
  providers: [
    ModerationAuditRepository,
    ModerationService,
    moderationCounterProvider,
    { provide: MessageModeration, useExisting: ModerationService },
  ],
  exports: [MessageModeration, ModerationAuditRepository],
})
export class ModerationEngineModule {}
