import { ApiProperty, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'Health' })
export class HealthDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

@ApiSchema({ name: 'ReadinessChecks' })
export class ReadinessChecksDto {
  @ApiProperty({ enum: ['up', 'down'] })
  database!: 'up' | 'down';
  @ApiProperty({ enum: ['up', 'down', 'not configured'] })
  redis!: 'up' | 'down' | 'not configured';
}

/** GET /readyz: 200 when every dependency answers and the instance is not shutting down, else 503 with the same body. */
@ApiSchema({ name: 'Readiness' })
export class ReadinessDto {
  @ApiProperty({ enum: ['ok', 'unavailable'] })
  status!: 'ok' | 'unavailable';
  checks!: ReadinessChecksDto;
}
