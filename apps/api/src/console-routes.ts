import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where the console is served: its pages call the API on the same origin with the same keys. */
export const CONSOLE_PREFIX = '/console';

/**
 * The console's built files (`apps/console/dist`, made by `npm run build`), or undefined when the
 * console package is not installed next to the API.
 */
export function defaultConsoleDir(): string | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve('@kairos/console/package.json');
    return join(dirname(pkg), 'dist');
  } catch {
    return undefined;
  }
}

// The pages load nothing from elsewhere; uPlot and Pico set inline styles, nothing runs inline.
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * Serves the console's files under /console/ (public: the data behind them needs a key), every
 * other /console/… address as its page (the pages route in the browser), and `/` redirects there.
 * Hashed assets are cached for good; the page itself is revalidated, so a new build shows at once.
 * A missing build answers 404 naming the command that makes it.
 */
export async function consoleRoutes(app: FastifyInstance, dir: string): Promise<void> {
  const hidden = { config: { scope: 'public' as const }, schema: { hide: true } };
  if (!existsSync(join(dir, 'index.html'))) {
    app.get(`${CONSOLE_PREFIX}/*`, hidden, (_req, reply) =>
      reply
        .code(404)
        .type('text/plain')
        .send(`The console is not built (no ${dir}/index.html): run npm run build.`),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: `${CONSOLE_PREFIX}/`,
    wildcard: false,
    index: false,
    setHeaders: (reply, path) => {
      void reply
        .header('content-security-policy', CSP)
        .header('x-content-type-options', 'nosniff')
        .header(
          'cache-control',
          path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
    },
  });
  const page = (_req: unknown, reply: FastifyReply) =>
    reply
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-cache')
      .sendFile('index.html', dir);
  app.get(CONSOLE_PREFIX, hidden, (_req, reply) => reply.redirect(`${CONSOLE_PREFIX}/`));
  app.get(`${CONSOLE_PREFIX}/`, hidden, page);
  app.get(`${CONSOLE_PREFIX}/*`, hidden, page);
  app.get('/', hidden, (_req, reply) => reply.redirect(`${CONSOLE_PREFIX}/`));
}
