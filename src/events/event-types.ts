import type { DomainEventMap, DomainEventType } from '../contract/events';

/**
 * The event log's records: a domain event to write (NewEvent) and one as stored (StoredEvent). What each
 * event's payload is, by name, is the event contract (src/contract/events.ts).
 */
export interface NewEvent<T extends DomainEventType = DomainEventType> {
  workspaceId: string;
  type: T;
  payload: DomainEventMap[T];
  /** Channel-scoped events get the channel's next contiguous `seq`. */
  channelId?: string;
  /** Users who must see the event in their sync feed even if they are not (or no longer) members. */
  audience?: string[];
}

interface StoredEventRecord {
  id: string;
  position: number;
  tx_id: string;
  workspace_id: string;
  channel_id: string | null;
  seq: number | null;
  audience: string[] | null;
  created_at: Date;
  /** The writing span's traceparent: read only by the followers, and only while tracing is on. */
  traceparent?: string | null;
}

/** An event as the log stores it: its payload is the contract's for its type (narrowed by `type`). */
export type StoredEvent<T extends DomainEventType = DomainEventType> = {
  [K in T]: StoredEventRecord & { type: K; payload: DomainEventMap[K] };
}[T];

/** An event as a statement's JSON carries it: `created_at` as text. */
export type StoredEventJson = StoredEvent extends infer E
  ? E extends StoredEvent
    ? Omit<E, 'created_at'> & { created_at: string }
    : never
  : never;

export function fromJson(e: StoredEventJson): StoredEvent {
  return { ...e, created_at: new Date(e.created_at) };
}
