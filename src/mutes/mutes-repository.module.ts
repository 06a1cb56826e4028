import { Module } from '@nestjs/common';
import { MutesRepository } from './mutes.repository';

/**
 * The mutes repository on its own, with no imports or routes: automatic moderation (loaded in every
 * role, for scheduled sends) mutes through it; MutesModule serves the routes.
 */
@Module({ providers: [MutesRepository], exports: [MutesRepository] })
export class MutesRepositoryModule {}
