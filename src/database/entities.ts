/**
 * No TypeORM entity classes: the schema lives in the migrations and every query is explicit SQL
 * through an EntityManager (keyset pages, ON CONFLICT, xmax, xid8 cursors), identical on PostgreSQL
 * and PGlite. Row types sit beside the repositories that read them.
 */
export const ENTITIES: never[] = [];
