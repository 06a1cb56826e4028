import { Module } from '@nestjs/common';
import { MessageViewsModule } from '../messages/message-views.module';
import { ReminderFiring } from './reminder-firing.service';
import { ReminderViews } from './reminder-views';

/** Reminders without routes: their firing (every role; the scheduler runs it unless SERVICE_ROLE=api). */
@Module({
  imports: [MessageViewsModule],
  providers: [ReminderViews, ReminderFiring],
  exports: [ReminderViews],
})
export class ReminderFiringModule {}
