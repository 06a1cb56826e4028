import { Module } from '@nestjs/common';
import { AttachmentLookupModule } from '../attachments/attachment-lookup.module';
import { ChannelMembershipModule } from '../channels/channel-membership.module';
import { MessageAttachments, PresignedAttachments } from './message-attachments';
import { MessageRules } from './message-rules';
import { MessageViewsModule } from './message-views.module';
import { MessagesService } from './messages.service';
import { PreSendHook } from './pre-send-hook';

/**
 * The send path (MessagesService with its rules) without routes, so every role can send: the worker
 * fires scheduled messages through it (CONTRACT §25). MessagesModule serves the routes.
 */
@Module({
  imports: [MessageViewsModule, ChannelMembershipModule, AttachmentLookupModule],
  providers: [
    MessagesService,
    MessageRules,
    PreSendHook,
    // seams: attachments binds its implementation here; MessageModeration is ModerationEngineModule's (global, every role)
    { provide: MessageAttachments, useClass: PresignedAttachments },
  ],
  exports: [MessageViewsModule, MessagesService, MessageRules],
})
export class MessageSendModule {}
