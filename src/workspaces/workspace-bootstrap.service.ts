import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { DEVELOPMENT_WORKSPACE_NAME, WorkspacesService } from './workspaces.service';

/**
 * Start-up workspaces: the SERVICE_BOOTSTRAP_API_KEY/SECRET pair when set; otherwise, on the embedded
 * database with no workspace at all, a development workspace whose pair is printed once.
 */
@Injectable()
export class WorkspaceBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    private readonly workspaces: WorkspacesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { SERVICE_BOOTSTRAP_API_KEY: key, SERVICE_BOOTSTRAP_API_SECRET: secret } = this.config;
    if (key && secret) {
      const result = await this.workspaces.ensureWithKeyPair('Bootstrap', key, secret);
      this.logger.log(`bootstrap workspace ${result} for ${key}`);
      return;
    }
    if (
      !this.config.embedded ||
      this.config.SERVICE_DATA_DIR.startsWith('memory://') ||
      this.config.SERVICE_ROLE === 'worker' ||
      (await this.workspaces.count()) > 0
    )
      return;
    const ws = await this.workspaces.create(DEVELOPMENT_WORKSPACE_NAME);
    const base = this.config.baseUrl;
    const banner = [
      '',
      '  A development workspace was created (shown once; it is stored only encrypted):',
      `    workspace id: ${ws.id}`,
      `    api_key:      ${ws.api_key}`,
      `    api_secret:   ${ws.api_secret}`,
      '',
      '  Try it:',
      `    curl -X PUT ${base}/v1/users/ana -H 'Authorization: Bearer ${ws.api_key}:${ws.api_secret}' \\`,
      `         -H 'Content-Type: application/json' -d '{"name":"Ana"}'`,
      '',
      `  Or chat in a browser: ${base}/demo`,
      '',
    ].join('\n');
    process.stdout.write(`${banner}\n`);
  }
}
