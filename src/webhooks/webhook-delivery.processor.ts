import { Inject, Injectable, Logger } from '@nestjs/common';
import { CredentialsService } from '../auth/credentials.service';
import { SecretBox } from '../common/crypto';
import { newId } from '../common/ids';
import { isoNotNull } from '../common/time';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { SafeHttpClient } from '../infra/http-out/safe-http.client';
import type { JobData } from '../infra/queue/job-map';
import { Metrics } from '../ops/metrics';
import { ATTR, contextOf, inSpan, tracingOn } from '../ops/tracing/tracing';
import {
  AttemptOutcome,
  DeliveryContext,
  DeliveryRow,
  WebhookDeliveriesRepository,
} from './webhook-deliveries.repository';
import { DELIVER_JOB, WebhookDispatcher } from './webhook-dispatcher';
import { SERVICE_VERSION } from '../common/version';
import { signedCallHeaders } from './webhook-signature';
import { JobProcessor, ProcessesJob } from '../infra/queue/job-processor';

export const WEBHOOK_USER_AGENT = `chat-service-webhooks/${SERVICE_VERSION}`;
/** SPEC.md: the response body kept on the delivery record. */
export const RESPONSE_BODY_BYTES = 1024;
/** The lease outlives the HTTP deadline by this much, so only a dead worker loses it. */
const LEASE_MARGIN_MS = 5_000;

type Classified = Pick<AttemptOutcome, 'responseStatus' | 'responseBody' | 'error'> & {
  kind: 'success' | 'terminal' | 'retryable';
};

/**
 * One HTTP attempt of one delivery: claim the delivery under a lease, POST the signed envelope outside
 * any transaction, then record the outcome, the attempt-log row and the webhook's failure streak in
 * one transaction, and queue the next attempt after it commits.
 */
@Injectable()
// parallel HTTP attempts per process
@ProcessesJob(DELIVER_JOB, { concurrency: 32 })
export class WebhookDeliveryProcessor extends JobProcessor<typeof DELIVER_JOB> {
  private readonly logger = new Logger('WebhookDelivery');

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly dispatcher: WebhookDispatcher,
    private readonly http: SafeHttpClient,
    private readonly box: SecretBox,
    private readonly credentials: CredentialsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  async handle({ deliveryId, attempt }: JobData<'webhook.deliver'>): Promise<void> {
    const token = newId();
    const leaseMs = this.config.SERVICE_WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS;
    const claimedAt = Date.now();
    const delivery = await this.deliveries.claim(deliveryId, attempt, token, leaseMs);
    if (!delivery) return; // already attempted, not due, held by another worker, or gone with its webhook
    try {
      if (!tracingOn()) await this.attempt(delivery, token);
      else await this.tracedAttempt(delivery, token, attempt, claimedAt);
    } catch (err) {
      // an infrastructure failure (database, secret): give the lease back so the job's retry can claim it
      await this.deliveries.release(deliveryId, token).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The attempt in a span that continues the trace of the request that wrote the event (its stored
   * traceparent): the POST's own span, from the http instrumentation, is its child and is what the
   * receiver's `traceparent` header names.
   */
  private tracedAttempt(
    delivery: DeliveryRow & DeliveryContext,
    token: string,
    attempt: number,
    claimedAt: number,
  ): Promise<void> {
    return inSpan(
      'chat.webhook deliver',
      {
        parent: contextOf(delivery.traceparent),
        startTime: claimedAt,
        attributes: {
          [ATTR.deliveryId]: delivery.id,
          [ATTR.webhookId]: delivery.webhook_id,
          [ATTR.workspaceId]: delivery.workspace_id,
          [ATTR.eventId]: delivery.event_id,
          [ATTR.eventType]: delivery.event,
          [ATTR.attempt]: attempt,
        },
      },
      () => this.attempt(delivery, token),
    );
  }

  private async attempt(delivery: DeliveryRow & DeliveryContext, token: string): Promise<void> {
    if (!delivery.enabled) {
      await this.deliveries.abandon(delivery.id, token, 'the webhook is disabled');
      return;
    }
    if (!delivery.payload || !delivery.event_created_at) {
      await this.deliveries.abandon(delivery.id, token, 'the event is no longer retained');
      return;
    }
    const secret = await this.signingKey(delivery.workspace_id, delivery);
    const body = Buffer.from(
      JSON.stringify({
        event_id: delivery.event_id,
        event: delivery.event,
        workspace_id: delivery.workspace_id,
        created_at: isoNotNull(delivery.event_created_at),
        data: delivery.payload,
      }),
    );
    const timestamp = Math.floor(Date.now() / 1000);
    const startedAt = new Date();
    const result = await this.http.post({
      url: delivery.url,
      body,
      timeoutMs: this.config.SERVICE_WEBHOOK_TIMEOUT_MS,
      keepBytes: RESPONSE_BODY_BYTES,
      allowPrivateNetworks: delivery.allow_private_networks,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        // Standard Webhooks beside SPEC.md's headers; the event id keeps `webhook-id` the same on every
        // attempt (retries and manual retries) and matches `X-Service-Event-Id`
        ...signedCallHeaders(secret, delivery.event, delivery.event_id, body, timestamp),
      },
    });
    this.metrics.webhookAttemptSeconds.observe(result.durationMs / 1000);
    const c: Classified =
      result.kind === 'error'
        ? { kind: 'retryable', responseStatus: null, responseBody: null, error: result.error }
        : classify(result.status, result.body);
    await this.record(delivery, token, c, startedAt, result.durationMs);
  }

  private async record(
    delivery: DeliveryRow,
    token: string,
    c: Classified,
    startedAt: Date,
    durationMs: number,
  ): Promise<void> {
    const schedule = this.config.SERVICE_WEBHOOK_RETRY_SCHEDULE_SECONDS;
    const inCycle = delivery.attempts + 1 - delivery.cycle_start;
    const base = { ...c, startedAt, durationMs };
    let outcome: AttemptOutcome;
    if (c.kind === 'success') {
      outcome = { ...base, status: 'succeeded', retryInMs: null, outcome: 'succeeded' };
    } else if (c.kind === 'terminal') {
      outcome = { ...base, status: 'failed', retryInMs: null, outcome: 'failed' };
    } else if (inCycle <= schedule.length) {
      const retryInMs = jittered(schedule[inCycle - 1]!, this.config.SERVICE_WEBHOOK_RETRY_JITTER);
      outcome = { ...base, status: 'pending', retryInMs, outcome: 'retry' };
    } else {
      outcome = { ...base, status: 'permanently_failed', retryInMs: null, outcome: 'permanently_failed' };
    }
    const threshold = this.config.SERVICE_WEBHOOK_AUTO_DISABLE_FAILURES;
    const recorded = await this.deliveries.recordAttempt(delivery.id, token, newId(), outcome, {
      success: c.kind === 'success',
      threshold,
      reason: `auto-disabled after ${threshold} consecutive failed attempts`,
    });
    if (!recorded) return;
    this.metrics.webhook.of(outcome.outcome).inc();
    if (recorded.disabled) {
      this.logger.warn(
        `webhook ${delivery.webhook_id} auto-disabled after ${threshold} consecutive failed attempts`,
      );
    }
    if (outcome.status === 'pending') {
      const next = {
        deliveryId: delivery.id,
        attempt: recorded.attempts + 1,
        delayMs: outcome.retryInMs ?? 0,
      };
      await this.dispatcher.enqueue([next]);
    }
  }

  private async signingKey(workspaceId: string, ctx: DeliveryContext): Promise<string> {
    if (ctx.signing === 'api_secret') return this.credentials.currentSecret(workspaceId);
    if (!ctx.secret_sealed) throw new Error('the webhook has no signing secret');
    return this.box.open(ctx.secret_sealed);
  }
}

/** 2xx success; 5xx retried; anything else (4xx, and redirects, which are never followed) is terminal. */
export function classify(status: number, body: string): Classified {
  const base = { responseStatus: status, responseBody: body };
  if (status >= 200 && status < 300) return { ...base, kind: 'success', error: null };
  if (status >= 500) return { ...base, kind: 'retryable', error: null };
  if (status >= 300 && status < 400)
    return { ...base, kind: 'terminal', error: 'redirects are not followed' };
  return { ...base, kind: 'terminal', error: null };
}

/** `seconds` × (1 ± jitter), in milliseconds. */
export function jittered(seconds: number, jitter: number, random = Math.random()): number {
  return Math.max(0, Math.round(seconds * 1000 * (1 + jitter * (2 * random - 1))));
}
