import { Module } from '@nestjs/common';
import { FlagsRepository } from './flags.repository';

/**
 * The flags repository on its own, with no imports: automatic moderation (imported by MessagesModule)
 * files its flags through it, and FlagsModule (which imports MessagesModule for the unsend) serves the
 * routes, without a module cycle.
 */
@Module({ providers: [FlagsRepository], exports: [FlagsRepository] })
export class FlagQueueModule {}
