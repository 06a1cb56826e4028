import { Module } from '@nestjs/common';
import { MessageSendModule } from '../messages/message-send.module';
import { ScheduledFiring } from './scheduled-firing.service';

/** Scheduled messages without routes: their firing (every role; the scheduler runs it unless SERVICE_ROLE=api). */
@Module({ imports: [MessageSendModule], providers: [ScheduledFiring] })
export class ScheduledFiringModule {}
