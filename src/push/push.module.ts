import { Module } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { FcmPushGateway } from '../infra/push/fcm.gateway';
import { DisabledPushGateway, PushGateway } from '../infra/push/push-gateway';
import { DevicesRepository } from './devices.repository';
import { PushWorkers } from './push-workers.service';
import { PushProcessor } from './push.processor';
import { PushRelay } from './push.relay';

/**
 * Push notifications for new messages: event log → relay → `push.message` job → FCM. Imported by
 * every role; it works only in `all`/`worker` and when SERVICE_PUSH_SERVICE_ACCOUNT_FILE is set
 * (a file that cannot be read stops start-up).
 */
@Module({
  providers: [
    {
      provide: PushGateway,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig): PushGateway =>
        c.SERVICE_PUSH_SERVICE_ACCOUNT_FILE
          ? new FcmPushGateway(c.SERVICE_PUSH_SERVICE_ACCOUNT_FILE)
          : new DisabledPushGateway(),
    },
    DevicesRepository,
    PushRelay,
    PushProcessor,
    PushWorkers,
  ],
  exports: [PushGateway, PushRelay],
})
export class PushModule {}
