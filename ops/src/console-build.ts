import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Builds the console with Vite into `outDir` (default `apps/console/dist`, which the API serves
 * under /console/): a second or two, so `npm start` and the browser tests always serve the pages
 * of this checkout. The tests build their own copy, which `npm run build` elsewhere cannot empty
 * under them.
 */
export async function buildConsole(root: string, outDir = join(root, 'apps/console/dist')): Promise<string> {
  const args = ['build', '--logLevel', 'warn', '--outDir', outDir, '--emptyOutDir'];
  await promisify(execFile)(join(root, 'node_modules/.bin/vite'), args, {
    cwd: join(root, 'apps/console'),
    maxBuffer: 16 * 1024 * 1024,
  });
  return outDir;
}
