import { Global, Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { FlagQueueModule } from '../flags/flag-queue.module';
import { MessageModeration } from '../messages/message-moderation';
import { MutesModule } from '../mutes/mutes.module';
import { ModerationAuditRepository } from './moderation-audit.repository';
import { ModerationAuditService } from './moderation-audit.service';
import { moderationCounterProvider } from './moderation-counter';
import { ModerationController } from './moderation.controller';
import { ModerationService } from './moderation.service';

/**
 * Automatic moderation: binds the messages feature's `MessageModeration` seam to the rule engine and
 * serves the audit trail. Global, composed by AppModule with the API's modules, so the messages feature
 * depends on its own seam and not on this one; FlagsModule writes the audit rows of its resolutions
 * through the exported repository.
 */
@Global()
@Module({
  imports: [ChannelsModule, MutesModule, FlagQueueModule],
  controllers: [ModerationController],
  providers: [
    ModerationAuditRepository,
    ModerationAuditService,
    ModerationService,
    moderationCounterProvider,
    { provide: MessageModeration, useExisting: ModerationService },
  ],
  exports: [MessageModeration, ModerationAuditRepository],
})
export class ModerationModule {}
