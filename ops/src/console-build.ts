import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Builds the console (`apps/console/dist`, which the API serves under /console/) with Vite: a
 * second or two, so `npm start` and the browser tests always serve the pages of this checkout.
 */
export async function buildConsole(root: string): Promise<string> {
  const dir = join(root, 'apps/console');
  await promisify(execFile)(join(root, 'node_modules/.bin/vite'), ['build', '--logLevel', 'warn'], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  return join(dir, 'dist');
}
