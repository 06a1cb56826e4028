import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { CredentialsService } from '../auth/credentials.service';
import { ChannelsService } from '../channels/channels.service';
import type { BackendPrincipal } from '../common/auth/principal';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/config.schema';
import { UsersService } from '../users/users.service';
import { DEVELOPMENT_WORKSPACE_NAME, WorkspacesService } from '../workspaces/workspaces.service';
import type { DemoSessionView } from './dto/demo-session.dto';

/** The channel each demo user joins on sign-in, so two windows can chat at once. */
export const DEMO_CHANNEL = { external_id: 'general', name: 'General' } as const;
/** Demo tokens live for the working day; the page signs in again when one expires. */
const DEMO_TOKEN_TTL_SECONDS = 8 * 3600;

/**
 * Development sign-in for the demo app (SERVICE_DEMO, on by default on the embedded database): upserts
 * the user in the development workspace, puts them in #general and issues a user token with the
 * service's own signer. The workspace secret never leaves the server.
 */
@Injectable()
export class DemoSessionService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Demo');
  private workspace?: Promise<BackendPrincipal>;

  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly users: UsersService,
    private readonly channels: ChannelsService,
    private readonly credentials: CredentialsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.logger.warn(
      `SERVICE_DEMO is on: ${this.config.baseUrl}/demo signs anyone in as any user of the development workspace ` +
        '(POST /demo/api/session, no credentials). Development only: set SERVICE_DEMO=false to turn it off.',
    );
  }

  async signIn(userId: string, name: string | undefined): Promise<DemoSessionView> {
    const backend = await this.developmentWorkspace();
    const { user } = await this.users.upsert(backend.workspaceId, {
      external_id: userId,
      ...(name ? { name } : {}),
    });
    const channelId = await this.joinDemoChannel(backend, userId);
    const token = await this.credentials.issueUserToken(backend.workspaceId, user, DEMO_TOKEN_TTL_SECONDS);
    return {
      ...token,
      user: { id: user.id, external_id: user.external_id, name: user.name },
      channel_id: channelId,
    };
  }

  /** Adds the user to #general, creating it (with them as admin) the first time. */
  private async joinDemoChannel(backend: BackendPrincipal, userId: string): Promise<string> {
    try {
      return (await this.channels.addMembers(backend, DEMO_CHANNEL.external_id, [userId])).id;
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'NOT_FOUND')) throw e;
    }
    try {
      const { channel } = await this.channels.create(backend.workspaceId, {
        type: 'group',
        ...DEMO_CHANNEL,
        created_by: userId,
      });
      return channel.id;
    } catch (e) {
      // another sign-in created it first
      if (!(e instanceof AppError && e.code === 'VALIDATION_ERROR')) throw e;
      return (await this.channels.addMembers(backend, DEMO_CHANNEL.external_id, [userId])).id;
    }
  }

  /**
   * The bootstrap workspace (SERVICE_BOOTSTRAP_API_KEY) when one is configured, else the oldest one named
   * "Development" (the embedded default creates it on a first start), created here when there is none.
   */
  private developmentWorkspace(): Promise<BackendPrincipal> {
    this.workspace ??= this.resolveWorkspace().catch((e: unknown) => {
      this.workspace = undefined; // try again on the next sign-in
      throw e;
    });
    return this.workspace;
  }

  private async resolveWorkspace(): Promise<BackendPrincipal> {
    const key = this.config.SERVICE_BOOTSTRAP_API_KEY;
    let id = key
      ? await this.workspaces.idOfKey(key)
      : await this.workspaces.oldestNamed(DEVELOPMENT_WORKSPACE_NAME);
    if (!id) {
      await this.workspaces.create(DEVELOPMENT_WORKSPACE_NAME);
      // instances racing here each created one: all of them settle on the oldest
      id = await this.workspaces.oldestNamed(DEVELOPMENT_WORKSPACE_NAME);
    }
    const ws = id ? await this.workspaces.get(id) : undefined;
    if (!ws?.api_key) throw new AppError('INTERNAL');
    return { kind: 'backend', workspaceId: ws.id, apiKey: ws.api_key };
  }
}
