import { Module } from '@nestjs/common';
import { HttpOutModule } from '../infra/http-out/http-out.module';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookRelay } from './webhook-relay.service';
import { WebhookSweeper } from './webhook-sweeper.service';
import { WebhookWorkers } from './webhook-workers.service';

/** The delivery pipeline: event log → relay → queue → HTTP attempt. Imported by every role. */
@Module({
  imports: [HttpOutModule],
  providers: [
    WebhookDeliveriesRepository,
    WebhookDispatcher,
    WebhookRelay,
    WebhookDeliveryProcessor,
    WebhookSweeper,
    WebhookWorkers,
  ],
  exports: [WebhookDeliveriesRepository, WebhookDispatcher, WebhookRelay, WebhookSweeper],
})
export class WebhookDeliveryModule {}
