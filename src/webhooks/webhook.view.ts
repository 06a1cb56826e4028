import { iso, isoNotNull } from '../common/time';
import type { DeliveryAttemptDto, DeliveryDto, WebhookDto } from './dto/webhook.dto';
import type { AttemptRow, DeliveryRow } from './webhook-deliveries.repository';
import type { WebhookRow } from './webhooks.repository';

/**
 * CONTRACT §10's webhook object (the signing secret is added only by create and rotate). The views are
 * typed as the documented schemas, so the OpenAPI document and the answers cannot drift apart.
 */
export function webhookView(row: WebhookRow): WebhookDto {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    signing: row.signing,
    consecutive_failures: row.consecutive_failures,
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
    created_at: isoNotNull(row.created_at),
    updated_at: isoNotNull(row.updated_at),
  };
}

export type WebhookView = ReturnType<typeof webhookView>;

/** CONTRACT §10's delivery record. */
export function deliveryView(row: DeliveryRow): DeliveryDto {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    response_body: row.response_body,
    error: row.error,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    created_at: isoNotNull(row.created_at),
    updated_at: isoNotNull(row.updated_at),
  };
}

export type DeliveryView = ReturnType<typeof deliveryView>;

export function attemptView(row: AttemptRow): DeliveryAttemptDto {
  return {
    attempt: row.attempt,
    started_at: isoNotNull(row.started_at),
    duration_ms: row.duration_ms,
    outcome: row.outcome,
    response_status: row.response_status,
    response_body: row.response_body,
    error: row.error,
  };
}
