import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, MaxLength, Min, MinLength } from 'class-validator';

export class PresignAttachmentDto {
  /** The file's name; only a safe base name of it is kept. */
  @IsString() @MinLength(1) @MaxLength(1024) filename!: string;

  /** MIME type, one of the allowed attachment types. */
  @IsString() @MinLength(1) @MaxLength(255) mime_type!: string;

  /** Exact size in bytes; the upload must match it. */
  @IsInt() @Min(1) size_bytes!: number;

  /** Channel id or external_id the file is meant for; a user must be a member. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200) channel_id?: string;
}

@ApiSchema({ name: 'PresignedUpload' })
export class PresignResponseDto {
  upload_url!: string;
  /** Always PUT. */
  @ApiProperty({ enum: ['PUT'] })
  method!: 'PUT';
  /** Headers to send with the PUT (Content-Type). */
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'Content-Type': 'image/png' },
  })
  headers!: Record<string, string>;
  /** Where the file is readable once uploaded; use it as a message's attachment_url. */
  public_url!: string;
  key!: string;
  @ApiProperty({ format: 'date-time' })
  expires_at!: string;
}
