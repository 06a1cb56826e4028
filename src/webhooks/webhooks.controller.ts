import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { BackendPrincipal, CurrentPrincipal } from '../common/auth/principal';
import { ApiErrors, BAD_PAGE } from '../common/errors/api-errors';
import { ListQueryDto } from '../common/http/list-query.dto';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  DeliveryDto,
  DeliveryPageDto,
  DeliveryWithAttemptsDto,
  ListDeliveriesQueryDto,
  UpdateWebhookDto,
  WebhookDto,
  WebhookPageDto,
  WebhookSecretDto,
} from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';
import { uuidParam } from '../common/http/uuid-param';

const WEBHOOK_ID = uuidParam('Webhook');
const NO_WEBHOOK = 'NOT_FOUND: no such webhook in the workspace';
const NO_DELIVERY = 'NOT_FOUND: no such webhook or delivery in the workspace';
const BAD_WEBHOOK =
  'VALIDATION_ERROR: a url that is not http(s) or resolves to a private, loopback or metadata address; an unknown or repeated event';

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
  @ApiOperation({ operationId: 'createWebhook', summary: 'Create a webhook' })
  @ApiCreatedResponse({ type: CreatedWebhookDto })
  @ApiErrors({ 400: BAD_WEBHOOK })
  create(@CurrentPrincipal() p: BackendPrincipal, @Body() dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.create(p.workspaceId, dto);
  }

  /** `{webhooks, has_more, next_cursor}`, newest first. */
  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'List webhooks' })
  @ApiOkResponse({ type: WebhookPageDto })
  @ApiErrors({ 400: BAD_PAGE })
  list(@CurrentPrincipal() p: BackendPrincipal, @Query() q: ListQueryDto): Promise<WebhookPageDto> {
    return this.webhooks.list(p.workspaceId, q);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Get a webhook' })
  @ApiOkResponse({ type: WebhookDto })
  @ApiErrors({ 404: NO_WEBHOOK })
  get(@CurrentPrincipal() p: BackendPrincipal, @Param('id', WEBHOOK_ID) id: string): Promise<WebhookDto> {
    return this.webhooks.get(p.workspaceId, id);
  }

  /** `enabled: true` re-enables an (auto-)disabled webhook and resets `consecutive_failures`. */
  @Patch(':id')
  @ApiOperation({ operationId: 'updateWebhook', summary: 'Update a webhook' })
  @ApiOkResponse({ type: WebhookDto })
  @ApiErrors({ 400: BAD_WEBHOOK, 404: NO_WEBHOOK })
  update(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Body() dto: UpdateWebhookDto,
  ): Promise<WebhookDto> {
    return this.webhooks.update(p.workspaceId, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhook', summary: 'Delete a webhook' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors({ 404: NO_WEBHOOK })
  async remove(@CurrentPrincipal() p: BackendPrincipal, @Param('id', WEBHOOK_ID) id: string): Promise<void> {
    await this.webhooks.remove(p.workspaceId, id);
  }

  /** `{signing_secret}`: the new secret, shown once; the old one stops signing at once. */
  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: "Rotate a webhook's signing secret" })
  @ApiOkResponse({ type: WebhookSecretDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: the webhook is signed with the workspace api_secret (rotate that instead)',
    404: NO_WEBHOOK,
  })
  rotate(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
  ): Promise<WebhookSecretDto> {
    return this.webhooks.rotateSecret(p.workspaceId, id);
  }

  /** `{deliveries, has_more, next_cursor}`, newest first, optionally filtered by `status`. */
  @Get(':id/deliveries')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: "List a webhook's deliveries" })
  @ApiOkResponse({ type: DeliveryPageDto })
  @ApiErrors({ 400: `${BAD_PAGE}; an unknown status`, 404: NO_WEBHOOK })
  deliveries(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Query() q: ListDeliveriesQueryDto,
  ): Promise<DeliveryPageDto> {
    return this.webhooks.listDeliveries(p.workspaceId, id, q);
  }

  /** One delivery with `attempt_log`, the history of its HTTP attempts. */
  @Get(':id/deliveries/:delivery_id')
  @ApiOperation({ operationId: 'getWebhookDelivery', summary: 'Get a delivery with its attempts' })
  @ApiOkResponse({ type: DeliveryWithAttemptsDto })
  @ApiErrors({ 404: NO_DELIVERY })
  delivery(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Param('delivery_id') deliveryId: string,
  ): Promise<DeliveryWithAttemptsDto> {
    return this.webhooks.getDelivery(p.workspaceId, id, deliveryId);
  }

  /** 202: re-attempts a delivery that is not pending (how to recover from a 4xx or exhausted retries). */
  @Post(':id/deliveries/:delivery_id/retry')
  @HttpCode(202)
  @ApiOperation({ operationId: 'retryWebhookDelivery', summary: 'Retry a delivery' })
  @ApiAcceptedResponse({
    type: DeliveryDto,
    description: 'The delivery, pending again; its next attempt is queued',
  })
  @ApiErrors({
    400: 'VALIDATION_ERROR: the delivery is pending (its next attempt is already scheduled)',
    404: NO_DELIVERY,
  })
  retry(
    @CurrentPrincipal() p: BackendPrincipal,
    @Param('id', WEBHOOK_ID) id: string,
    @Param('delivery_id') deliveryId: string,
  ): Promise<DeliveryDto> {
    return this.webhooks.retry(p.workspaceId, id, deliveryId);
  }
}
