import type { ExportSection } from '../export-document';
import { bansSection } from './bans.section';
import { blocksSection } from './blocks.section';
import { devicesSection } from './devices.section';
import { draftsSection } from './drafts.section';
import { flagsSection } from './flags.section';
import { membershipsSection } from './memberships.section';
import { messagesSection } from './messages.section';
import { pollVotesSection } from './poll-votes.section';
import { reactionsSection } from './reactions.section';
import { remindersSection } from './reminders.section';
import { scheduledMessagesSection } from './scheduled-messages.section';
import { moderationMuteSection, userSection } from './user.section';

/**
 * The export document's sections, in the order they are written (CONTRACT §20). This list is the
 * extension point: a new kind of personal data gets an `ExportSection` of its own (a file beside
 * these; a list reads with `keysetList`, one page at a time) and a line here.
 */
export const EXPORT_SECTIONS: readonly ExportSection[] = [
  userSection,
  moderationMuteSection,
  membershipsSection,
  messagesSection,
  reactionsSection,
  blocksSection,
  devicesSection,
  flagsSection,
  bansSection,
  draftsSection,
  remindersSection,
  scheduledMessagesSection,
  pollVotesSection,
];
