import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { createValidationPipe } from '../common/errors/validation';
import { ListChannelsQueryDto, MAX_METADATA_FILTERS } from './dto/channel.dto';

const PREFIX = 'metadata.';
const MAX_KEY_LENGTH = 128;
const MAX_VALUE_LENGTH = 1024;

/** The validated query of the backend channel list; a plain type, so the global validation leaves it to the pipe. */
export type ChannelListQuery = Pick<ListChannelsQueryDto, keyof ListChannelsQueryDto> & {
  /** `metadata.<key>=<value>` filters: that top-level key with exactly that string value. */
  metadata?: Record<string, string>;
};

/**
 * GET /v1/channels's query: the `metadata.<key>=<value>` filters (CONTRACT §17: string equality on a
 * top-level key, at most 3) are taken out of the query string, the rest is validated as
 * ListChannelsQueryDto with the same rules as every other query (unknown parameters are a 400).
 */
@Injectable()
export class ChannelListQueryPipe implements PipeTransform<
  Record<string, unknown>,
  Promise<ChannelListQuery>
> {
  private readonly validation = createValidationPipe();

  async transform(query: Record<string, unknown>): Promise<ChannelListQuery> {
    const rest: Record<string, unknown> = {};
    const metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(query ?? {})) {
      if (!name.startsWith(PREFIX)) {
        rest[name] = value;
        continue;
      }
      const key = name.slice(PREFIX.length);
      if (!key || key.length > MAX_KEY_LENGTH)
        throw AppError.validation(name, `a metadata filter needs a key of 1-${MAX_KEY_LENGTH} characters`);
      if (typeof value !== 'string' || value.length > MAX_VALUE_LENGTH)
        throw AppError.validation(name, `must be given once, at most ${MAX_VALUE_LENGTH} characters`);
      metadata[key] = value;
    }
    if (Object.keys(metadata).length > MAX_METADATA_FILTERS)
      throw AppError.validation('metadata', `at most ${MAX_METADATA_FILTERS} metadata.<key> filters`);
    const dto = (await this.validation.transform(rest, {
      type: 'query',
      metatype: ListChannelsQueryDto,
    })) as ListChannelsQueryDto;
    return Object.keys(metadata).length ? { ...dto, metadata } : dto;
  }
}
