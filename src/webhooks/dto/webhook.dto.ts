import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { ListQueryDto } from '../../common/http/list-query.dto';
import {
  DELIVERY_STATUSES,
  DeliveryStatus,
  SIGNING_MODES,
  SigningMode,
  WEBHOOK_EVENTS,
  WebhookEvent,
} from '../webhook-events';

const EVENTS_MESSAGE = `each value must be one of ${WEBHOOK_EVENTS.join(', ')}`;

export class CreateWebhookDto {
  /** http(s) URL the events are POSTed to. Private and loopback targets are refused unless the server allows them. */
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  url!: string;

  /** Event names to subscribe to. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE })
  events!: WebhookEvent[];

  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  /** The HMAC key: the webhook's own `signing_secret` (default) or the workspace `api_secret`. */
  @IsOptional()
  @IsIn(SIGNING_MODES)
  signing?: SigningMode;
}

export class UpdateWebhookDto {
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(2048)
  url?: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE })
  events?: WebhookEvent[];

  /** `true` re-enables the webhook and resets `consecutive_failures`. */
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;
}

export class ListDeliveriesQueryDto extends ListQueryDto {
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}
