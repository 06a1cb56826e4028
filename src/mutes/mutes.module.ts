import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { MutesController } from './mutes.controller';
import { MutesRepositoryModule } from './mutes-repository.module';
import { MutesService } from './mutes.service';

@Module({
  imports: [UsersModule, MutesRepositoryModule],
  controllers: [MutesController],
  providers: [MutesService],
  exports: [MutesRepositoryModule],
})
export class MutesModule {}
