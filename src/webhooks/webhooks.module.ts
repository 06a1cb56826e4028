import { Module } from '@nestjs/common';
import { WebhookDeliveryModule } from './webhook-delivery.module';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Webhook management API (CONTRACT §10); the delivery pipeline comes with it. */
@Module({
  imports: [WebhookDeliveryModule],
  controllers: [WebhooksController],
  providers: [WebhooksRepository, WebhooksService],
})
export class WebhooksModule {}
