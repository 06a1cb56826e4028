import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module';
import { StorageModule } from '../infra/storage/storage.module';
import { AttachmentLookup } from './attachment-lookup';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsRepository } from './attachments.repository';
import { AttachmentsService } from './attachments.service';
import { UploadsController } from './uploads.controller';
import { UploadsService } from './uploads.service';

/** Presigned uploads (CONTRACT §9), the local driver's upload route and `GET /files/<key>`. */
@Module({
  imports: [StorageModule, ChannelsModule],
  controllers: [AttachmentsController, UploadsController],
  providers: [AttachmentsRepository, AttachmentsService, UploadsService, AttachmentLookup],
  exports: [AttachmentLookup],
})
export class AttachmentsModule {}
