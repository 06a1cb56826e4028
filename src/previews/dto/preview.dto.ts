import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { MAX_PREVIEW_URL } from '../linked-urls';

/** POST /v1/previews. */
export class PreviewRequestDto {
  /** An absolute http or https URL (at most 2,048 characters). */
  @IsString() @MinLength(1) @MaxLength(MAX_PREVIEW_URL) url!: string;
}

/** CONTRACT §26: a page's preview. */
@ApiSchema({ name: 'LinkPreview' })
export class LinkPreviewDto {
  /** The URL as it was written. */
  url!: string;
  /** og:title, else the page's <title> (at most 300 characters). */
  title!: string;
  /** og:description, else the meta description (at most 1,000 characters). */
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  /** og:image resolved against the page's URL (http or https only). */
  @ApiProperty({ type: String, nullable: true }) image_url!: string | null;
  /** og:site_name. */
  @ApiProperty({ type: String, nullable: true }) site_name!: string | null;
}
