import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule } from '@nestjs/config';
import { AppConfig, environment, loadConfig } from './config.schema';

export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * The validated configuration (config.schema.ts: every variable typed, every bad one named), as the
 * APP_CONFIG value and through @nestjs/config's `ConfigService<AppConfig>`. Loaded once, before the
 * app is built (main.ts reads the environment over `.env`), so a bad variable stops start-up with one
 * message; tests pass their own.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig = loadConfig(environment())): DynamicModule {
    return {
      module: ConfigModule,
      imports: [
        NestConfigModule.forRoot({
          ignoreEnvFile: true,
          ignoreEnvVars: true,
          skipProcessEnv: true,
          load: [() => ({ ...config })],
          cache: true,
        }),
      ],
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG, NestConfigModule],
    };
  }
}
