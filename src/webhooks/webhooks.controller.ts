import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ListQueryDto } from '../common/http/list-query.dto';
import { CreateWebhookDto, ListDeliveriesQueryDto, UpdateWebhookDto } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';
import { uuidParam } from '../common/http/uuid-param';

const WEBHOOK_ID = uuidParam('Webhook');

@ApiTags('webhooks')
@Auth('backend')
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  /**
   * Creates a webhook; the `signing_secret` (a Standard Webhooks secret, `whsec_` + base64 of 32 bytes)
   * is shown in this response only. Deliveries carry `X-Service-Signature` and the Standard Webhooks
   * `webhook-id`, `webhook-timestamp` and `webhook-signature` headers.
   */
  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: BackendPrincipal, @Body() dto: CreateWebhookDto) {
    return this.webhooks.create(p.workspaceId, dto);
  }

  /** `{webhooks, has_more, next_cursor}`, newest first. */
  @Get()
  list(@CurrentPrincipal() p: BackendPrincipal, @Query() q: ListQueryDto) {
    return this.webhooks.list(p.workspaceId, q);
  }

  @Get(':id')
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id', WEBHOOK_ID) id: string) {
    return this.webhooks.get(p.workspaceId, id);
  }

  /** `enabled: true` re-enables an (auto-)disabled webhook and resets `consecutive_failures`. */
  @Patch(':id')
  update(@CurrentPrincipal() p: BackendPrincipal, @Param('id', WEBHOOK_ID) id: string, @Body() dto: UpdateWebhookDto) {
    return this.webhooks.update(p.workspaceId, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@CurrentPrincipal() p: BackendPrincipal, @Param('id', WEBHOOK_ID) id: string): Promise<void> {
    await this.webhooks.remove(p.workspaceId, id);
  }

  /** `{signing_secret}`: the new secret, shown once; the old one stops signing at once. */
  @Post(':id/rotate-secret')
  @HttpCode(200)
  rotate(@CurrentPrincipal() p: BackendPrincipal, @Param('id', WEBHOOK_ID) id: string) {
    return this.webhooks.rotateSecret(p.workspaceId, id);
  }

  /** `{deliveries, has_more, next_cursor}`, newest first, optionally filtered by `status`. */
  @Get(':id/deliveries')
  deliveries(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Query() q: ListDeliveriesQueryDto,
  ) {
    return this.webhooks.listDeliveries(p.workspaceId, id, q);
  }

  /** One delivery with `attempt_log`, the history of its HTTP attempts. */
  @Get(':id/deliveries/:delivery_id')
  delivery(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Param('delivery_id') deliveryId: string,
  ) {
    return this.webhooks.getDelivery(p.workspaceId, id, deliveryId);
  }

  /** 202: re-attempts a delivery that is not pending (how to recover from a 4xx or exhausted retries). */
  @Post(':id/deliveries/:delivery_id/retry')
  @HttpCode(202)
  retry(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Param('delivery_id') deliveryId: string,
  ) {
    return this.webhooks.retry(p.workspaceId, id, deliveryId);
  }
}
