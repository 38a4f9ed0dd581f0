import { defineConfig } from 'vite';

// Served by the API under /console/ (same origin, same API keys); bundled here, nothing from a CDN.
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 200 },
});
