import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { ModerationAuditService } from './moderation-audit.service';
import { ModerationController } from './moderation.controller';

/** The moderation audit trail's route; the rules themselves are ModerationEngineModule's (every role). */
@Module({
  imports: [ChannelsModule],
  controllers: [ModerationController],
  providers: [ModerationAuditService],
})
export class ModerationModule {}
