import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { StorageModule } from '../infra/storage/storage.module';
import { AttachmentLookupModule } from './attachment-lookup.module';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsService } from './attachments.service';
import { UploadsController } from './uploads.controller';
import { UploadsService } from './uploads.service';

/** Presigned uploads (CONTRACT §9), the local driver's upload route and `GET /files/<key>`. */
@Module({
  imports: [StorageModule, ChannelsModule, AttachmentLookupModule],
  controllers: [AttachmentsController, UploadsController],
  providers: [AttachmentsService, UploadsService],
  exports: [AttachmentLookupModule],
})
export class AttachmentsModule {}
