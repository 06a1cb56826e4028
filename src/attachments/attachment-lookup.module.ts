import { Module } from '@nestjs/common';
import { AttachmentLookup } from './attachment-lookup';
import { AttachmentsRepository } from './attachments.repository';

/**
 * What the presign recorded about an attachment URL, without routes: the send path (MessageSendModule,
 * which every role loads for scheduled messages) resolves attachments through it.
 */
@Module({
  providers: [AttachmentsRepository, AttachmentLookup],
  exports: [AttachmentsRepository, AttachmentLookup],
})
export class AttachmentLookupModule {}
