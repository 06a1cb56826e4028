import { Module } from '@nestjs/common';
import { PollEngineModule } from './poll-engine.module';
import { PollsController } from './polls.controller';

/** CONTRACT §28's routes; PollEngineModule holds the service and the closing. */
@Module({ imports: [PollEngineModule], controllers: [PollsController] })
export class PollsModule {}
