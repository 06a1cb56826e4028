import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The private-network policy a webhook was registered under (SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS of
 * the instance that accepted its URL). Every instance delivers every webhook; a worker configured
 * stricter than the instance that accepted a private target would otherwise refuse deliveries the
 * API had allowed. Public targets are still checked on the address actually connected to.
 */
export class WebhookNetworkPolicy1763690700000 implements MigrationInterface {
  name = 'WebhookNetworkPolicy1763690700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN allow_private_networks boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN allow_private_networks`);
  }
}
