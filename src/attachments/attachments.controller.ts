import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { AttachmentsService } from './attachments.service';
import { PresignAttachmentDto, PresignResponseDto } from './dto/presign.dto';

/** CONTRACT §9. */
@ApiTags('attachments')
@Controller('v1/attachments')
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  /**
   * A presigned upload: PUT the bytes to `upload_url` with `headers` within 15 minutes, then send a
   * message with `attachment_url: public_url`. 415 for a type that is not allowed, 413 over the size limit.
   */
  @Post('presign')
  @Auth('any')
  @HttpCode(200)
  @ApiOkResponse({ type: PresignResponseDto })
  presign(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Body() dto: PresignAttachmentDto,
  ): Promise<PresignResponseDto> {
    return this.attachments.presign(p, dto);
  }
}
