import { Module } from '@nestjs/common';
import { StorageModule } from '../infra/storage/storage.module';
import { EXPORT_SECTIONS_TOKEN, ExportBuildProcessor } from './export-build.processor';
import { ExportSweeper } from './export-sweeper.service';
import { ExportWorkers } from './export-workers.service';
import { ExportsRepository } from './exports.repository';
import { EXPORT_SECTIONS } from './sections';

/**
 * The build side of user exports: `export.build` job → sections in keyset pages → storage driver,
 * and the sweeper. Imported by every role; it works in `all` and `worker`.
 */
@Module({
  imports: [StorageModule],
  providers: [
    ExportsRepository,
    { provide: EXPORT_SECTIONS_TOKEN, useValue: EXPORT_SECTIONS },
    ExportBuildProcessor,
    ExportSweeper,
    ExportWorkers,
  ],
  exports: [ExportsRepository, ExportBuildProcessor, ExportSweeper],
})
export class ExportBuildModule {}
