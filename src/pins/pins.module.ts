import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { PinsController } from './pins.controller';
import { PinsRepository } from './pins.repository';
import { PinsService } from './pins.service';

/** CONTRACT §16. Exports the repository for the unsend path (unsending a pinned message unpins it). */
@Module({
  imports: [ChannelsModule, MessageViewsModule],
  controllers: [PinsController],
  providers: [PinsService, PinsRepository],
  exports: [PinsRepository],
})
export class PinsModule {}
