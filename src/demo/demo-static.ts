import { existsSync } from 'fs';
import { join } from 'path';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/config.schema';

export const DEMO_PREFIX = '/demo';
/** Where `npm run build` puts the demo app (scripts/build-demo.js); the same path from src/ and dist/. */
export const DEMO_DIR = join(__dirname, '..', '..', 'dist', 'public', 'demo');

/**
 * The demo page's policy: its own scripts and styles only (no CDN), the API and socket on this origin,
 * images from wherever attachments are served (the local driver here, or an S3 bucket).
 */
function contentSecurityPolicy(config: AppConfig): string {
  const files = new URL(config.publicFilesUrl).origin;
  return [
    "default-src 'self'",
    `img-src 'self' ${files} blob: data:`,
    `connect-src 'self' ${files} ws: wss:`,
    "style-src 'self'",
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Serves the demo app under /demo: index.html and config.json are revalidated on every load, the
 * content-hashed bundles are cached for a year. Whether the page offers the development sign-in comes
 * from config.json. Before a build there is a 404 saying how to build it.
 */
export function demoStatic(config: AppConfig, dir = DEMO_DIR): express.Router {
  const router = express.Router();
  const csp = contentSecurityPolicy(config);
  router.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  router.get('/config.json', (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.json({ dev_sign_in: config.demoSignIn });
  });
  router.use(
    express.static(dir, {
      index: 'index.html',
      fallthrough: true,
      setHeaders: (res, path) => {
        const hashed = /-[A-Z0-9]{8}\.(js|css)$/.test(path);
        res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  router.get('/', (_req: Request, res: Response, next: NextFunction) => {
    if (existsSync(join(dir, 'index.html'))) return next();
    res
      .status(404)
      .type('text/plain')
      .send('The demo app is not built: run `npm run build` (it builds the service and the demo).\n');
  });
  return router;
}
