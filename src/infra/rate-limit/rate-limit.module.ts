import { Global, Module } from '@nestjs/common';
import { RateLimiter, rateLimiterProvider } from './rate-limiter';

@Global()
@Module({ providers: [rateLimiterProvider], exports: [RateLimiter] })
export class RateLimitModule {}
