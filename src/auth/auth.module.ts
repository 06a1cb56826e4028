import { Global, Module } from '@nestjs/common';
import { Authenticator } from '../common/auth/authenticator';
import { CredentialsService } from './credentials.service';
import { UserIdCache } from './user-id.cache';
import { WorkspaceKeyCache } from './workspace-key.cache';

/**
 * Credentials (CONTRACT §3): workspace key pairs and user JWTs, the caches every request and socket
 * handshake reads them through, and the Authenticator that the global AuthGuard and the gateway call.
 * In every role (a worker's health and metrics routes pass the same guard).
 */
@Global()
@Module({
  providers: [
    WorkspaceKeyCache,
    UserIdCache,
    CredentialsService,
    { provide: Authenticator, useExisting: CredentialsService },
  ],
  exports: [WorkspaceKeyCache, UserIdCache, CredentialsService, Authenticator],
})
export class AuthModule {}
