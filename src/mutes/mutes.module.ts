import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { MutesController } from './mutes.controller';
import { MutesRepository } from './mutes.repository';
import { MutesService } from './mutes.service';

@Module({
  imports: [UsersModule],
  controllers: [MutesController],
  providers: [MutesRepository, MutesService],
  exports: [MutesRepository],
})
export class MutesModule {}
