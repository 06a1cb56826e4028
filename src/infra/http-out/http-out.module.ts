import { Global, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { SafeHttpClient } from './safe-http.client';

@Injectable()
class HttpOutLifecycle implements OnApplicationShutdown {
  constructor(@Inject(SafeHttpClient) private readonly client: SafeHttpClient) {}

  onApplicationShutdown(): void {
    this.client.close();
  }
}

/** The SSRF-safe outbound HTTP client, configured by SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
@Global()
@Module({
  providers: [
    {
      provide: SafeHttpClient,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new SafeHttpClient(config.SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS),
    },
    HttpOutLifecycle,
  ],
  exports: [SafeHttpClient],
})
export class HttpOutModule {}
