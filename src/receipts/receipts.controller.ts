import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { MarkDto } from './dto/receipt.dto';
import { ReceiptsService } from './receipts.service';

@ApiTags('receipts')
@Auth('any')
@Controller('v1/channels/:id')
export class ReceiptsController {
  constructor(private readonly receipts: ReceiptsService) {}

  /** Sets the caller's last_read_at to now (and last_delivered_at to at least that). */
  @Post('read')
  @HttpCode(200)
  read(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string, @Body() dto: MarkDto) {
    return this.receipts.markRead(p, id, dto.user_external_id);
  }

  @Post('delivered')
  @HttpCode(200)
  delivered(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string, @Body() dto: MarkDto) {
    return this.receipts.markDelivered(p, id, dto.user_external_id);
  }

  /** Every member's read and delivery cursors. */
  @Get('receipts')
  list(@CurrentPrincipal() p: WorkspacePrincipal, @Param('id') id: string) {
    return this.receipts.list(p, id);
  }
}
