import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
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
import { PageDto } from '../../common/http/page.dto';
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
  @ApiProperty({ enum: WEBHOOK_EVENTS, enumName: 'WebhookEvent', isArray: true })
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

  @ApiPropertyOptional({ enum: WEBHOOK_EVENTS, enumName: 'WebhookEvent', isArray: true })
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
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, enumName: 'DeliveryStatus' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

/** A webhook. */
@ApiSchema({ name: 'Webhook' })
export class WebhookDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  url!: string;
  @ApiProperty({ enum: WEBHOOK_EVENTS, enumName: 'WebhookEvent', isArray: true })
  events!: string[];
  description!: string | null;
  /** false once disabled, by hand or after too many failures in a row */
  enabled!: boolean;
  @ApiProperty({ enum: SIGNING_MODES, enumName: 'SigningMode' })
  signing!: SigningMode;
  consecutive_failures!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  disabled_at!: string | null;
  disabled_reason!: string | null;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

/** A new webhook: the only answer besides rotate that carries its signing secret. */
@ApiSchema({ name: 'CreatedWebhook' })
export class CreatedWebhookDto extends WebhookDto {
  /** `whsec_…`; null for a webhook signed with the workspace api_secret. */
  @ApiProperty({ type: String, nullable: true })
  signing_secret!: string | null;
}

@ApiSchema({ name: 'WebhookPage' })
export class WebhookPageDto extends PageDto {
  webhooks!: WebhookDto[];
}

/** The new signing secret, shown once; the old one stops signing at once. */
@ApiSchema({ name: 'WebhookSecret' })
export class WebhookSecretDto {
  signing_secret!: string;
}

/** A delivery record: one event to one webhook. */
@ApiSchema({ name: 'Delivery' })
export class DeliveryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uuid' })
  webhook_id!: string;
  @ApiProperty({ format: 'uuid' })
  event_id!: string;
  /** The event name, e.g. `message.created`. */
  event!: string;
  @ApiProperty({ enum: DELIVERY_STATUSES, enumName: 'DeliveryStatus' })
  status!: DeliveryStatus;
  attempts!: number;
  /** The HTTP status of the last attempt, or null */
  response_status!: number | null;
  /** The first 1,024 bytes of the last response */
  response_body!: string | null;
  error!: string | null;
  /** While pending: when the next attempt is due */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  next_attempt_at!: string | null;
  @ApiProperty({ format: 'date-time' })
  created_at!: string;
  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

@ApiSchema({ name: 'DeliveryPage' })
export class DeliveryPageDto extends PageDto {
  deliveries!: DeliveryDto[];
}

/** One HTTP attempt of a delivery. */
@ApiSchema({ name: 'DeliveryAttempt' })
export class DeliveryAttemptDto {
  attempt!: number;
  @ApiProperty({ format: 'date-time' })
  started_at!: string;
  duration_ms!: number;
  /** How the attempt ended: `succeeded`, `failed`, `retry` or `permanently_failed` */
  outcome!: string;
  response_status!: number | null;
  response_body!: string | null;
  error!: string | null;
}

/** A delivery with the history of its attempts. */
@ApiSchema({ name: 'DeliveryWithAttempts' })
export class DeliveryWithAttemptsDto extends DeliveryDto {
  attempt_log!: DeliveryAttemptDto[];
}
