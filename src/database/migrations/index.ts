import { Foundation1763690000000 } from './1763690000000-foundation';
import { Messaging1763690100000 } from './1763690100000-messaging';

/** Every migration, in order. Listed explicitly so the same array serves the app, the CLI and tests. */
export const MIGRATIONS = [Foundation1763690000000, Messaging1763690100000];
