import { isoNotNull } from '../common/time';
import type { UserPayload } from '../contract/events';
import type { UserDto } from './dto/user.dto';
import type { UserRow } from './users.repository';

export type UserView = UserPayload;

/** Typed as the documented `User` schema, so the OpenAPI document and the answer cannot drift apart. */
export function userView(row: UserRow): UserDto {
  return {
    id: row.id,
    external_id: row.external_id,
    name: row.name,
    avatar_url: row.avatar_url,
    metadata: row.metadata ?? {},
    created_at: isoNotNull(row.created_at),
    updated_at: isoNotNull(row.updated_at),
  };
}
