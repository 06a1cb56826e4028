import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { MessagesModule } from '../messages/messages.module';
import { ReceiptsModule } from '../receipts/receipts.module';
import { SyncController } from '../sync/sync.controller';
import { SyncService } from '../sync/sync.service';
import { EnvelopeBuilder } from './envelopes';
import { PresenceCoalescer } from './presence.coalescer';
import { RealtimeGateway } from './realtime.gateway';
import { RealtimePublisher } from './realtime.publisher';

/** The Socket.IO gateway, presence announcements, the log publisher, and catch-up (sync) that shares their envelopes. */
@Module({
  imports: [ChannelsModule, MessagesModule, MessageViewsModule, ReceiptsModule],
  controllers: [SyncController],
  providers: [EnvelopeBuilder, PresenceCoalescer, RealtimeGateway, RealtimePublisher, SyncService],
})
export class RealtimeModule {}
