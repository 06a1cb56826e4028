import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A workspace's own quotas, set by the operator (PATCH /v1/admin/workspaces/{id}/quotas): the ones it
 * has override the instance's defaults (SERVICE_WORKSPACE_*). Only added: a build before this one runs
 * against it unchanged.
 */
export class WorkspaceQuotas1763691240000 implements MigrationInterface {
  name = 'WorkspaceQuotas1763691240000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspaces ADD COLUMN quotas jsonb NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workspaces DROP COLUMN quotas`);
  }
}
