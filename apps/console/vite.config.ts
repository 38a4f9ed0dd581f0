import { defineConfig } from 'vite';

// Served by the API under /console/ (same origin, same API keys); bundled here, nothing from a CDN.
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 200 },
  // `npm run dev -w @kairos/console`: pages reload on save; API calls go to the running API.
  server: {
    proxy: Object.fromEntries(
      ['/v1', '/healthz'].map((p) => [p, process.env.KAIROS_API_URL ?? 'http://127.0.0.1:58090']),
    ),
  },
});
