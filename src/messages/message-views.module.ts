import { Module } from '@nestjs/common';
import { PinsRepository } from '../pins/pins.repository';
import { MessageUnsend } from './message-unsend';
import { MessageViews } from './message-view.service';
import { MessagesRepository } from './messages.repository';

/**
 * MessageViews, MessagesRepository and the unsend (with the pins repository it unpins through) on
 * their own, with no imports, so that any feature (channel lists, membership notices, realtime,
 * search, flag reviews, user erasure in the worker role) can render, write or unsend messages without
 * importing MessagesModule and risking a module cycle.
 */
@Module({
  providers: [MessageViews, MessagesRepository, PinsRepository, MessageUnsend],
  exports: [MessageViews, MessagesRepository, PinsRepository, MessageUnsend],
})
export class MessageViewsModule {}
