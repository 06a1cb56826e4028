import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { RealtimeModule } from '../realtime/realtime.module';
import { SyncController } from './sync.controller';
import { SyncService } from './sync.service';

/** Catch-up (CONTRACT §12): a channel's events by seq and a user's across channels, in realtime's envelopes. */
@Module({
  imports: [ChannelsModule, RealtimeModule],
  controllers: [SyncController],
  providers: [SyncService],
})
export class SyncModule {}
