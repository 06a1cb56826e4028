/**
 * Which users are online right now: a socket on any instance. Implemented by the realtime
 * PresenceStore (src/realtime), read by the channels API.
 */
export abstract class PresenceReader {
  abstract onlineOf(userIds: string[]): Promise<Set<string>>;
}
