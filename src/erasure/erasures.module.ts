import { Module } from '@nestjs/common';
import { ErasureModule } from './erasure.module';
import { ErasuresController } from './erasures.controller';

/** CONTRACT §20 erasure, the API side beside `DELETE /v1/users/:external_id`: a job's state. */
@Module({
  imports: [ErasureModule],
  controllers: [ErasuresController],
})
export class ErasuresModule {}
