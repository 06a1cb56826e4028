import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors, NO_CHANNEL } from '../common/errors/api-errors';
import { AttachmentsService } from './attachments.service';
import { PresignAttachmentDto, PresignResponseDto } from './dto/presign.dto';

/** Presigned uploads and the files they store. */
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
  @ApiOperation({ operationId: 'presignAttachment', summary: 'Get a presigned upload URL' })
  @ApiOkResponse({ type: PresignResponseDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: a missing or empty filename, a size_bytes below 1',
    403: 'NOT_A_MEMBER: a user presigning for a channel it is not in',
    404: NO_CHANNEL,
    413: 'ATTACHMENT_TOO_LARGE: size_bytes over SERVICE_MAX_ATTACHMENT_SIZE_BYTES',
    415: 'UNSUPPORTED_MEDIA_TYPE: a mime_type that is not allowed',
  })
  presign(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Body() dto: PresignAttachmentDto,
  ): Promise<PresignResponseDto> {
    return this.attachments.presign(p, dto);
  }
}
