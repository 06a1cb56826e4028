import { Global, Module } from '@nestjs/common';
import { PresenceReader } from '../channels/presence-reader';
import { PresenceStore } from './presence.store';

/** Presence is global: the realtime gateway counts sockets (through the PresenceCoalescer), the channels API reads them. */
@Global()
@Module({
  providers: [PresenceStore, { provide: PresenceReader, useExisting: PresenceStore }],
  exports: [PresenceStore, PresenceReader],
})
export class PresenceModule {}
