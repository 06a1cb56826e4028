import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { DemoSessionDto, DemoSessionView } from './dto/demo-session.dto';
import { DemoSessionService } from './demo-session.service';

/**
 * The demo app's development sign-in. Registered only when SERVICE_DEMO is on (otherwise 404), and kept
 * out of the OpenAPI document: it is not part of the API integrators build on.
 */
@ApiExcludeController()
@Auth('public')
@Controller('demo/api')
export class DemoSessionController {
  constructor(private readonly demo: DemoSessionService) {}

  @Post('session')
  @HttpCode(200)
  session(@Body() dto: DemoSessionDto): Promise<DemoSessionView> {
    return this.demo.signIn(dto.user_id, dto.name);
  }
}
