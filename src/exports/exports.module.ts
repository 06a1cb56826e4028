import { Module } from '@nestjs/common';
import { StorageModule } from '../infra/storage/storage.module';
import { UsersModule } from '../users/users.module';
import { ExportBuildModule } from './export-build.module';
import { ExportsController } from './exports.controller';
import { ExportsService } from './exports.service';

/** CONTRACT §20 exports, the API side: request an export, read its state and download URL. */
@Module({
  imports: [ExportBuildModule, UsersModule, StorageModule],
  controllers: [ExportsController],
  providers: [ExportsService],
})
export class ExportsModule {}
