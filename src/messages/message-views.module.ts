import { Module } from '@nestjs/common';
import { MessageViews } from './message-view.service';

/**
 * MessageViews on its own, with no imports, so that any feature (channel lists, realtime, search) can
 * render messages without importing MessagesModule and risking a module cycle.
 */
@Module({ providers: [MessageViews], exports: [MessageViews] })
export class MessageViewsModule {}
