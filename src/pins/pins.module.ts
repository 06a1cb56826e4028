import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MessageViewsModule } from '../messages/message-views.module';
import { PinsController } from './pins.controller';
import { PinsService } from './pins.service';

/** CONTRACT §16. PinsRepository comes from MessageViewsModule, beside the unsend that unpins through it. */
@Module({
  imports: [ChannelsModule, MessageViewsModule],
  controllers: [PinsController],
  providers: [PinsService],
})
export class PinsModule {}
