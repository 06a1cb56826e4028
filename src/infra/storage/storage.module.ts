import { Global, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/config.schema';
import { loadEncryptionKey } from '../secrets/secrets.module';
import { LocalObjectStorage } from './local.storage';
import { ObjectStorage } from './object-storage';
import { S3ObjectStorage } from './s3.storage';
import { UploadSigner } from './upload-signer';

export function createObjectStorage(config: AppConfig): ObjectStorage {
  switch (config.SERVICE_STORAGE_DRIVER) {
    case 'local':
      return new LocalObjectStorage(config, new UploadSigner(loadEncryptionKey(config)));
    case 's3':
      return new S3ObjectStorage(config);
  }
}

@Injectable()
class StorageLifecycle implements OnApplicationShutdown {
  constructor(private readonly storage: ObjectStorage) {}

  onApplicationShutdown(): void {
    if (this.storage instanceof LocalObjectStorage || this.storage instanceof S3ObjectStorage)
      this.storage.close();
  }
}

/** The configured object store (SERVICE_STORAGE_DRIVER). */
@Global()
@Module({
  providers: [
    { provide: ObjectStorage, inject: [APP_CONFIG], useFactory: createObjectStorage },
    StorageLifecycle,
  ],
  exports: [ObjectStorage],
})
export class StorageModule {}
