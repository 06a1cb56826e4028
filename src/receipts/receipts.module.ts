import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { MyChannelsModule } from '../channels/my-channels.module';
import { UsersModule } from '../users/users.module';
import { ReceiptsController } from './receipts.controller';
import { ReceiptsService } from './receipts.service';

@Module({
  imports: [ChannelsModule, MyChannelsModule, UsersModule],
  controllers: [ReceiptsController],
  providers: [ReceiptsService],
  exports: [ReceiptsService],
})
export class ReceiptsModule {}
