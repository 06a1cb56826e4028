import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** One registry per process (tests create several apps in one process, hence not the global one). */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly events = new Counter({
    name: 'chat_events_total',
    help: 'Events written to the event log, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly unhandledRejections = new Counter({
    name: 'process_unhandled_rejections_total',
    help: 'Promise rejections nobody handled (logged, never fatal), by kind: dependency (a database or Redis away) or other',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly fanoutFailures = new Counter({
    name: 'realtime_fanout_failures_total',
    help: 'Socket.IO emits and room changes that did not reach the other instances (Redis away); local sockets still got them',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Express middleware: times every request and labels it with its route template, not its URL. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const end = this.httpDuration.startTimer();
      res.on('finish', () => {
        const route = (req.route as { path?: string } | undefined)?.path;
        end({ method: req.method, route: route ? `${req.baseUrl}${route}` : 'unmatched', status: String(res.statusCode) });
      });
      next();
    };
  }
}
