import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { RemindersController } from './reminders.controller';
import { ReminderFiringModule } from './reminder-firing.module';
import { RemindersService } from './reminders.service';

/** CONTRACT §25's reminder routes; ReminderFiringModule fires them. Unsend and leaving delete them. */
@Module({
  imports: [ChannelsModule, ReminderFiringModule],
  controllers: [RemindersController],
  providers: [RemindersService],
})
export class RemindersModule {}
