import { Module } from '@nestjs/common';
import { PreviewsService } from './previews.service';

/** Link previews without routes: the fetch, the cache and its sweep (every role; the scheduler sweeps unless SERVICE_ROLE=api). */
@Module({ providers: [PreviewsService], exports: [PreviewsService] })
export class PreviewFetchModule {}
