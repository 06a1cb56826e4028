import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { UsersModule } from '../users/users.module';
import { DemoSessionController } from './demo-session.controller';
import { DemoSessionService } from './demo-session.service';

/** The development sign-in of the demo app at /demo (the static files themselves: demo-static.ts). */
@Module({
  imports: [UsersModule, ChannelsModule],
  controllers: [DemoSessionController],
  providers: [DemoSessionService],
})
export class DemoModule {}
