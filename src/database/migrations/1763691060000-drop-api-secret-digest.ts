import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 11, finding 7: `workspace_keys.secret_sha256` was an unsalted SHA-256 of the API secret, so an
 * operator-chosen secret could be guessed offline from a database dump. The secret is already kept
 * sealed (AES-256-GCM under SERVICE_ENCRYPTION_KEY) and every instance opens it once per cache fill to
 * sign tokens, so the pair is now checked against the opened secret and the digest goes: nothing left
 * in the database can be tested against a guess without the encryption key.
 *
 * Upgrading: instances of an earlier version read this column; once the migration has run they fail
 * to load keys. Replace them all in one step (or accept failed requests on the old ones until the
 * rollout ends); the Helm chart's rolling update finishes within a minute.
 */
export class DropApiSecretDigest1763691060000 implements MigrationInterface {
  name = 'DropApiSecretDigest1763691060000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspace_keys DROP COLUMN secret_sha256`);
  }

  async down(): Promise<void> {
    // the digests cannot be rebuilt without opening every secret; a downgrade needs a restore
    throw new Error('DropApiSecretDigest1763691060000 cannot be reverted: restore a backup taken before it');
  }
}
