/**
 * Which users are online right now. The realtime gateway provides the real implementation (sockets on
 * every instance, through Redis when configured); until it is bound, nobody is online.
 */
export abstract class PresenceReader {
  abstract onlineOf(userIds: string[]): Promise<Set<string>>;
}

export class NobodyOnline extends PresenceReader {
  async onlineOf(): Promise<Set<string>> {
    return new Set();
  }
}
