import type { Receiver } from '../../support/receiver';

/** A span as an OTLP/HTTP JSON export carries it (ids as hex, attributes as plain values). */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  service: unknown;
}

export const SERVER = 2;
export const CLIENT = 3;

/** The OTLP endpoint's path under OTEL_EXPORTER_OTLP_ENDPOINT. */
export const TRACES_PATH = '/v1/traces';

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** OTLP/JSON ids are hex; an exporter that sends base64 is read too. */
function hex(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)
    ? id.toLowerCase()
    : Buffer.from(id, 'base64').toString('hex');
}

/** Every span the receiver got on TRACES_PATH so far. */
export function exportedSpans(rx: Receiver): ExportedSpan[] {
  const out: ExportedSpan[] = [];
  for (const req of rx.received(TRACES_PATH)) {
    for (const rs of req.json?.resourceSpans ?? []) {
      const service = attributes(rs.resource?.attributes)['service.name'];
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          out.push({
            traceId: hex(s.traceId),
            spanId: hex(s.spanId),
            parentSpanId: s.parentSpanId ? hex(s.parentSpanId) : null,
            name: s.name,
            kind: Number(s.kind),
            attributes: attributes(s.attributes),
            links: (s.links ?? []).map((l: { traceId: string; spanId: string; attributes?: KeyValue[] }) => ({
              traceId: hex(l.traceId),
              spanId: hex(l.spanId),
              attributes: attributes(l.attributes),
            })),
            service,
          });
        }
      }
    }
  }
  return out;
}

/** The spans of one trace, with lookups by id and a walk up to the root. */
export class Trace {
  readonly byId: Map<string, ExportedSpan>;

  constructor(
    readonly traceId: string,
    readonly spans: ExportedSpan[],
  ) {
    this.byId = new Map(spans.map((s) => [s.spanId, s]));
  }

  static of(all: ExportedSpan[], traceId: string): Trace {
    return new Trace(
      traceId,
      all.filter((s) => s.traceId === traceId),
    );
  }

  /** The span and its ancestors in this trace, up to the first whose parent is not here. */
  chain(span: ExportedSpan): ExportedSpan[] {
    const out = [span];
    for (
      let p = span.parentSpanId && this.byId.get(span.parentSpanId);
      p;
      p = p.parentSpanId && this.byId.get(p.parentSpanId)
    )
      out.push(p);
    return out;
  }

  root(span: ExportedSpan): ExportedSpan {
    return this.chain(span).at(-1)!;
  }

  children(span: ExportedSpan): ExportedSpan[] {
    return this.spans.filter((s) => s.parentSpanId === span.spanId);
  }

  /** A readable outline, for failure messages. */
  outline(): string {
    const lines: string[] = [];
    const walk = (s: ExportedSpan, depth: number) => {
      lines.push(`${'  '.repeat(depth)}${s.name} [${s.kind}] ${s.spanId}`);
      for (const c of this.children(s)) walk(c, depth + 1);
    };
    for (const s of this.spans.filter((x) => !x.parentSpanId || !this.byId.has(x.parentSpanId))) walk(s, 0);
    return lines.join('\n');
  }
}
