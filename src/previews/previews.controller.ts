import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../common/auth/auth.decorator';
import { CurrentPrincipal, WorkspacePrincipal } from '../common/auth/principal';
import { ApiErrors } from '../common/errors/api-errors';
import { LinkPreviewDto, PreviewRequestDto } from './dto/preview.dto';
import { PreviewsService } from './previews.service';

/** Link previews (CONTRACT §26). */
@ApiTags('previews')
@Controller('v1')
export class PreviewsController {
  constructor(private readonly previews: PreviewsService) {}

  /**
   * The preview of a page, fetched now (or from the workspace's cache, an hour): its title, description,
   * image and site name.
   */
  @Post('previews')
  @HttpCode(200)
  @Auth('any')
  @ApiOperation({ operationId: 'previewLink', summary: 'Preview a link' })
  @ApiOkResponse({ type: LinkPreviewDto })
  @ApiErrors({
    400: 'VALIDATION_ERROR: not an http or https URL, over 2,048 characters, or an address the server may not fetch',
    403: 'FORBIDDEN: link previews are turned off in this workspace (link_previews_enabled)',
    422: 'PREVIEW_UNAVAILABLE: nothing usable came back (not HTML, no title, an error status, a timeout)',
    429: 'RATE_LIMITED: over 30 a minute for the user (or the key pair); Retry-After in seconds',
  })
  preview(
    @CurrentPrincipal() p: WorkspacePrincipal,
    @Body() dto: PreviewRequestDto,
  ): Promise<LinkPreviewDto> {
    return this.previews.preview(p, dto.url);
  }
}
