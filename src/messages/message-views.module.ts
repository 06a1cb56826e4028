import { Module } from '@nestjs/common';
import { MessageViews } from './message-view.service';
import { MessagesRepository } from './messages.repository';

/**
 * MessageViews and MessagesRepository on their own, with no imports, so that any feature (channel
 * lists, membership notices, realtime, search) can render or write messages without importing
 * MessagesModule and risking a module cycle.
 */
@Module({ providers: [MessageViews, MessagesRepository], exports: [MessageViews, MessagesRepository] })
export class MessageViewsModule {}
