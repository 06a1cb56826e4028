import {
  context,
  isSpanContextValid,
  Link,
  ROOT_CONTEXT,
  Span,
  SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { SERVICE_VERSION } from '../../common/version';

/*
 * OpenTelemetry tracing, opt-in (docs/OBSERVABILITY.md). This module uses the API only: without the SDK
 * (tracing off, the default) nothing here starts a span or reads a context, each helper costs one
 * boolean test. src/ops/tracing/sdk.ts starts the SDK, before anything else loads, when the standard
 * OTEL_* variables ask for traces (tracingRequested).
 */

let on = false;
let shutdown: (() => Promise<void>) | null = null;

/** Whether the environment asks for traces: an OTLP endpoint or a traces exporter, and the SDK not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporter === 'none') return false;
  return !!(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** sdk.ts, once the SDK runs: spans from here on, and how to flush them at the end. */
export function tracingStarted(flush: () => Promise<void>): void {
  on = true;
  shutdown = flush;
}

export function tracingOn(): boolean {
  return on;
}

/** A collector that does not answer does not hold up the exit longer than this. */
const FLUSH_MS = 3_000;

/** Exports the spans still buffered and stops the SDK (a graceful shutdown); nothing when tracing is off. */
export async function flushTracing(): Promise<void> {
  const s = shutdown;
  shutdown = null;
  if (!s) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    s().catch(() => undefined),
    new Promise<void>((r) => (timer = setTimeout(r, FLUSH_MS).unref())),
  ]);
  clearTimeout(timer);
}

const tracer = trace.getTracer('chat-service', SERVICE_VERSION);

/** Span attributes of this service (besides OpenTelemetry's semantic conventions). */
export const ATTR = {
  eventId: 'chat.event.id',
  eventType: 'chat.event.type',
  events: 'chat.events',
  workspaceId: 'chat.workspace.id',
  channelId: 'chat.channel.id',
  seq: 'chat.event.seq',
  webhookId: 'chat.webhook.id',
  deliveryId: 'chat.webhook.delivery.id',
  attempt: 'chat.webhook.attempt',
  batch: 'chat.send.batch_size',
} as const;

/**
 * The W3C `traceparent` of the span running now, when it is sampled (stored with the events a
 * transaction writes, so the log's followers link to it); null when tracing is off or nothing is traced.
 */
export function activeTraceparent(): string | null {
  if (!on) return null;
  return traceparentOf(trace.getActiveSpan()?.spanContext());
}

export function traceparentOf(sc: SpanContext | undefined): string | null {
  if (!sc || !isSpanContextValid(sc) || !(sc.traceFlags & TraceFlags.SAMPLED)) return null;
  return `00-${sc.traceId}-${sc.spanId}-01`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span a stored `traceparent` names (null for none or a malformed one). */
function spanContextOf(traceparent: string | null | undefined): SpanContext | null {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return null;
  const sc: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(sc) ? sc : null;
}

/** A context whose parent is the span a stored `traceparent` names (the root context for none). */
export function contextOf(traceparent: string | null | undefined): Context {
  const sc = spanContextOf(traceparent);
  return sc ? trace.setSpanContext(ROOT_CONTEXT, sc) : ROOT_CONTEXT;
}

/** Links to the spans that wrote these events (one per event, with its id), for a follower's span. */
export function linksToWriters(events: { id: string; traceparent?: string | null }[]): Link[] {
  const links: Link[] = [];
  for (const e of events) {
    const sc = spanContextOf(e.traceparent);
    if (sc) links.push({ context: sc, attributes: { [ATTR.eventId]: e.id } });
  }
  return links;
}

interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The parent; by default the active context. */
  parent?: Context;
  startTime?: number;
}

/** `fn` inside a new active span when tracing is on (ended when it settles, its error recorded); else just `fn`. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!on) return fn(undefined);
  const { parent, ...opts } = options;
  return tracer.startActiveSpan(name, opts, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      failed(span, e);
      throw e;
    } finally {
      span.end();
    }
  });
}

/** The synchronous kind of inSpan (a Socket.IO emit). */
export function inSpanSync<T>(name: string, options: SpanOptions, fn: () => T): T {
  if (!on) return fn();
  const { parent, ...opts } = options;
  return tracer.startActiveSpan(name, opts, parent ?? context.active(), (span) => {
    try {
      return fn();
    } catch (e) {
      failed(span, e);
      throw e;
    } finally {
      span.end();
    }
  });
}

/** `fn` in the context the caller had when it captured `ctx` (null: as it is). */
export function within<T>(ctx: Context | null, fn: () => T): T {
  return ctx ? context.with(ctx, fn) : fn();
}

/** `fn` outside any trace: background work that a request happened to schedule must not join its trace. */
export function detached<T>(fn: () => T): T {
  return on ? context.with(ROOT_CONTEXT, fn) : fn();
}

/** The active context when tracing is on (to carry across a queue), else null. */
export function captureContext(): Context | null {
  return on ? context.active() : null;
}

/** The span of a captured context (for a link). */
export function spanContextIn(ctx: Context | null): SpanContext | undefined {
  return ctx ? trace.getSpanContext(ctx) : undefined;
}

function failed(span: Span, e: unknown): void {
  span.recordException(e instanceof Error ? e : String(e));
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
}

export { ROOT_CONTEXT, SpanKind };
