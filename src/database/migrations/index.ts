import { Foundation1763690000000 } from './1763690000000-foundation';

/** Every migration, in order. Listed explicitly so the same array serves the app, the CLI and tests. */
export const MIGRATIONS = [Foundation1763690000000];
