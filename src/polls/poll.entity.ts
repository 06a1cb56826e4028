import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
  Unique,
} from 'typeorm';
import { Message } from '../messages/message.entity';
import { User } from '../users/user.entity';
import { Workspace } from '../workspaces/workspace.entity';

/** `polls`: the poll of a message of type `poll` (CONTRACT §28), with its counters. */
@Entity({ name: 'polls' })
@Unique('polls_message', ['messageId'])
@Check('polls_counts', 'total_votes >= 0 AND voter_count >= 0')
@Index('polls_closing', ['closesAt'], { where: 'closed_at IS NULL AND closes_at IS NOT NULL' })
@Index('polls_workspace', ['workspaceId'])
@Index('polls_creator', ['createdBy'])
export class Poll {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'polls_pkey' })
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @ManyToOne(() => Workspace, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workspace_id', foreignKeyConstraintName: 'polls_workspace_id_fkey' })
  workspace?: Relation<Workspace>;

  @Column('uuid', { name: 'message_id' })
  messageId!: string;

  @ManyToOne(() => Message, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'polls_message_id_fkey' })
  message?: Relation<Message>;

  /** Who created it (the backend names the user); null once that user is deleted. */
  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy!: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'polls_created_by_fkey' })
  creator?: Relation<User>;

  @Column('text')
  question!: string;

  @Column('boolean', { name: 'multiple_choice', default: false })
  multipleChoice!: boolean;

  @Column('boolean', { default: false })
  anonymous!: boolean;

  /** When the scheduler closes it; null: only by hand. */
  @Column('timestamptz', { name: 'closes_at', nullable: true })
  closesAt!: Date | null;

  @Column('timestamptz', { name: 'closed_at', nullable: true })
  closedAt!: Date | null;

  /** Votes cast: the sum of the options' vote_count. */
  @Column('integer', { name: 'total_votes', default: 0 })
  totalVotes!: number;

  /** Users with a vote. */
  @Column('integer', { name: 'voter_count', default: 0 })
  voterCount!: number;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}

/** `poll_options`: a poll's options in order, each with its count. */
@Entity({ name: 'poll_options' })
@Unique('poll_options_position', ['pollId', 'position'])
@Unique('poll_options_of_poll', ['pollId', 'id'])
@Check('poll_options_count', 'vote_count >= 0')
export class PollOption {
  @PrimaryColumn('uuid', { primaryKeyConstraintName: 'poll_options_pkey' })
  id!: string;

  @Column('uuid', { name: 'poll_id' })
  pollId!: string;

  @ManyToOne(() => Poll, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'poll_id', foreignKeyConstraintName: 'poll_options_poll_id_fkey' })
  poll?: Relation<Poll>;

  @Column('smallint')
  position!: number;

  @Column('text')
  text!: string;

  @Column('integer', { name: 'vote_count', default: 0 })
  voteCount!: number;
}

/** `poll_votes`: one row per option a user chose. */
@Entity({ name: 'poll_votes' })
@Index('poll_votes_recent', ['pollId', 'createdAt', 'userId'])
@Index('poll_votes_option', ['optionId', 'createdAt', 'userId'])
@Index('poll_votes_user', ['userId'])
export class PollVote {
  @PrimaryColumn('uuid', { name: 'poll_id', primaryKeyConstraintName: 'poll_votes_pkey' })
  pollId!: string;

  @ManyToOne(() => Poll, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'poll_id', foreignKeyConstraintName: 'poll_votes_poll_id_fkey' })
  poll?: Relation<Poll>;

  @PrimaryColumn('uuid', { name: 'user_id', primaryKeyConstraintName: 'poll_votes_pkey' })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'poll_votes_user_id_fkey' })
  user?: Relation<User>;

  @PrimaryColumn('uuid', { name: 'option_id', primaryKeyConstraintName: 'poll_votes_pkey' })
  optionId!: string;

  /** One of its poll's options (a composite key: a vote cannot name another poll's option). */
  @ManyToOne(() => PollOption, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'poll_id', referencedColumnName: 'pollId', foreignKeyConstraintName: 'poll_votes_option_fkey' },
    { name: 'option_id', referencedColumnName: 'id', foreignKeyConstraintName: 'poll_votes_option_fkey' },
  ])
  option?: Relation<PollOption>;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
