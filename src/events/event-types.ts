/**
 * The event log's typed map: every domain event type and the payload stored with it. Webhooks send
 * these payloads as `data`; realtime and sync derive their envelopes from them.
 */
export interface UserPayload {
  id: string;
  external_id: string;
  name: string | null;
  avatar_url: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface DomainEventMap {
  'user.created': { user: UserPayload };
}

export type DomainEventType = keyof DomainEventMap;

export interface NewEvent<T extends DomainEventType = DomainEventType> {
  workspaceId: string;
  type: T;
  payload: DomainEventMap[T];
  /** Channel-scoped events get the channel's next contiguous `seq`. */
  channelId?: string;
  /** Users who must see the event in their sync feed even if they are not (or no longer) members. */
  audience?: string[];
}

export interface StoredEvent {
  id: string;
  position: number;
  tx_id: string;
  workspace_id: string;
  channel_id: string | null;
  seq: number | null;
  type: DomainEventType;
  payload: Record<string, unknown>;
  audience: string[] | null;
  created_at: Date;
}
