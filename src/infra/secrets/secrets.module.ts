import { Global, Logger, Module } from '@nestjs/common';
import { randomBytes } from 'crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { SecretBox } from '../../common/crypto';

/**
 * The key that seals secrets at rest. With DATABASE_URL it must come from SERVICE_ENCRYPTION_KEY (every
 * instance shares it); on the embedded default it is generated once into the data directory.
 */
export function loadEncryptionKey(config: AppConfig): Buffer {
  if (config.SERVICE_ENCRYPTION_KEY) return config.SERVICE_ENCRYPTION_KEY;
  if (config.SERVICE_DATA_DIR.startsWith('memory://')) return randomBytes(32);
  const file = join(config.SERVICE_DATA_DIR, 'encryption.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    return key;
  }
  mkdirSync(config.SERVICE_DATA_DIR, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  new Logger('Secrets').log(`generated an encryption key in ${file}`);
  return key;
}

@Global()
@Module({
  providers: [
    {
      provide: SecretBox,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => new SecretBox(loadEncryptionKey(c)),
    },
  ],
  exports: [SecretBox],
})
export class SecretsModule {}
