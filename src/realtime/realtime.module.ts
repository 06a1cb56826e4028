import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { MessagesModule } from '../messages/messages.module';
import { ReceiptsModule } from '../receipts/receipts.module';
import { EnvelopeBuilder } from './envelopes';
import { PresenceCoalescer } from './presence.coalescer';
import { RealtimeGateway } from './realtime.gateway';
import { RealtimePublisher } from './realtime.publisher';

/** The Socket.IO gateway, presence announcements and the log's realtime publisher; its envelopes serve catch-up (SyncModule) too. */
@Module({
  imports: [ChannelsModule, MessagesModule, MessageViewsModule, ReceiptsModule],
  providers: [EnvelopeBuilder, PresenceCoalescer, RealtimeGateway, RealtimePublisher],
  exports: [EnvelopeBuilder],
})
export class RealtimeModule {}
