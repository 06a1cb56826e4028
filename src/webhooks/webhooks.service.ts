import { Injectable } from '@nestjs/common';
import { SecretBox } from '../common/crypto';
import { AppError } from '../common/errors/app-error';
import { isUuid, newId } from '../common/ids';
import { decodeIdCursor, pageOf } from '../common/pagination';
import { SafeHttpClient } from '../infra/http-out/safe-http.client';
import { CreateWebhookDto, ListDeliveriesQueryDto, UpdateWebhookDto } from './dto/webhook.dto';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDispatcher } from './webhook-dispatcher';
import { newSigningSecret } from './webhook-signature';
import { attemptView, deliveryView, DeliveryView, webhookView, WebhookView } from './webhook.view';
import { WebhookRow, WebhooksRepository } from './webhooks.repository';

const DEFAULT_LIMIT = 50;

/** Webhook management and the delivery log (CONTRACT §10). Delivery itself lives in the relay and processor. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly dispatcher: WebhookDispatcher,
    private readonly box: SecretBox,
    private readonly http: SafeHttpClient,
  ) {}

  /** The signing secret is returned here and by rotate only; `null` for webhooks signed with the api_secret. */
  async create(
    workspaceId: string,
    dto: CreateWebhookDto,
  ): Promise<WebhookView & { signing_secret: string | null }> {
    const url = await this.checkUrl(dto.url);
    const signing = dto.signing ?? 'signing_secret';
    const secret = signing === 'signing_secret' ? newSigningSecret() : null;
    const row = await this.webhooks.insert({
      id: newId(),
      workspaceId,
      url,
      events: dto.events,
      description: dto.description ?? null,
      signing,
      secretSealed: secret ? this.box.seal(secret) : null,
      allowPrivateNetworks: this.http.allowsPrivateNetworks,
    });
    return { ...webhookView(row), signing_secret: secret };
  }

  async list(workspaceId: string, q: { limit?: number; before?: string }) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const before = q.before ? this.cursorId(q.before) : undefined;
    const page = pageOf(await this.webhooks.list(workspaceId, limit + 1, before), limit, (r) => [r.id]);
    return { webhooks: page.items.map(webhookView), has_more: page.has_more, next_cursor: page.next_cursor };
  }

  async get(workspaceId: string, id: string): Promise<WebhookView> {
    return webhookView(await this.require(workspaceId, id));
  }

  async update(workspaceId: string, id: string, dto: UpdateWebhookDto): Promise<WebhookView> {
    await this.require(workspaceId, id); // 404 before anything about the body is revealed
    const url = dto.url !== undefined && dto.url !== null ? await this.checkUrl(dto.url) : undefined;
    const row = await this.webhooks.update(workspaceId, id, {
      url,
      events: dto.events ?? undefined,
      description: dto.description,
      enabled: dto.enabled ?? undefined,
      allowPrivateNetworks: this.http.allowsPrivateNetworks,
    });
    if (!row) throw AppError.notFound('Webhook');
    return webhookView(row);
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    if (!(await this.webhooks.delete(workspaceId, id))) throw AppError.notFound('Webhook');
  }

  /** A new secret takes effect for every attempt from now on; the old one stops at once. */
  async rotateSecret(workspaceId: string, id: string): Promise<{ signing_secret: string }> {
    const row = await this.require(workspaceId, id);
    if (row.signing === 'api_secret') {
      throw AppError.validation(
        'signing',
        'this webhook is signed with the workspace api_secret; rotate that with POST /v1/workspace/rotate-secret',
      );
    }
    const secret = newSigningSecret();
    if (!(await this.webhooks.setSecret(workspaceId, id, this.box.seal(secret))))
      throw AppError.notFound('Webhook');
    return { signing_secret: secret };
  }

  async listDeliveries(workspaceId: string, webhookId: string, q: ListDeliveriesQueryDto) {
    await this.require(workspaceId, webhookId);
    const limit = q.limit ?? DEFAULT_LIMIT;
    const before = q.before ? this.cursorId(q.before) : undefined;
    const rows = await this.deliveries.list(workspaceId, webhookId, {
      limit: limit + 1,
      beforeId: before,
      status: q.status,
    });
    const page = pageOf(rows, limit, (r) => [r.id]);
    return {
      deliveries: page.items.map(deliveryView),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
    };
  }

  /** One delivery with its attempt history (an extension: CONTRACT §10 lists deliveries only). */
  async getDelivery(workspaceId: string, webhookId: string, deliveryId: string) {
    const row =
      isUuid(webhookId) && isUuid(deliveryId)
        ? await this.deliveries.find(workspaceId, webhookId, deliveryId)
        : null;
    if (!row) throw AppError.notFound('Delivery');
    return { ...deliveryView(row), attempt_log: (await this.deliveries.attemptsOf(row.id)).map(attemptView) };
  }

  /** 202: the delivery is pending again and its next attempt is queued. A pending delivery is refused. */
  async retry(workspaceId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    await this.require(workspaceId, webhookId);
    if (!isUuid(deliveryId)) throw AppError.notFound('Delivery');
    const row = await this.deliveries.resetForRetry(workspaceId, webhookId, deliveryId);
    if (!row) {
      const existing = await this.deliveries.find(workspaceId, webhookId, deliveryId);
      if (!existing) throw AppError.notFound('Delivery');
      throw AppError.validation('status', 'the delivery is pending: its next attempt is already scheduled');
    }
    await this.dispatcher.enqueue([{ deliveryId: row.id, attempt: row.attempts + 1 }]);
    return deliveryView(row);
  }

  private async require(workspaceId: string, id: string): Promise<WebhookRow> {
    const row = isUuid(id) ? await this.webhooks.find(workspaceId, id) : null;
    if (!row) throw AppError.notFound('Webhook');
    return row;
  }

  private cursorId(before: string): string {
    return decodeIdCursor(before);
  }

  private async checkUrl(raw: string): Promise<string> {
    const problem = await this.http.targetProblem(raw);
    if (problem) throw AppError.validation('url', problem);
    return raw.trim();
  }
}
