import { Module } from '@nestjs/common';
import { PreviewsController } from './previews.controller';
import { PreviewFetchModule } from './preview-fetch.module';

/** CONTRACT §26's `POST /v1/previews`; PreviewFetchModule fetches, caches and sweeps. */
@Module({ imports: [PreviewFetchModule], controllers: [PreviewsController] })
export class PreviewsModule {}
