import type { ColumnType, DataSource } from 'typeorm';

/**
 * PostgreSQL types of the schema that TypeORM's postgres driver does not list. TypeORM checks every
 * entity column's type against that list when a DataSource initializes (DataTypeNotSupportedError),
 * while its schema reader reports these columns by their PostgreSQL names: declaring them as another
 * type would make every schema diff "change" them.
 */
/** The event log's transaction ids (`events.tx_id`, `event_relay_cursors.tx_id`), read as text. */
export const XID8 = 'xid8' as ColumnType;
/** `webhooks.created_snapshot`, read as text (`xmin:xmax:xip,...`). */
export const PG_SNAPSHOT = 'pg_snapshot' as ColumnType;

/** Lets `dataSource` accept the types above; call it before `initialize()`. */
export function acceptSchemaColumnTypes<T extends DataSource>(dataSource: T): T {
  const supported = dataSource.driver.supportedDataTypes;
  for (const type of [XID8, PG_SNAPSHOT]) if (!supported.includes(type)) supported.push(type);
  return dataSource;
}
