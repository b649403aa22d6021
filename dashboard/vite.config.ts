import { defineConfig } from 'vite';

// Served by the gateway at /_/ (gateway/src/dashboard-static.ts); hashed files under /_/assets.
export default defineConfig({
  base: '/_/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', assetsInlineLimit: 0, sourcemap: false },
});
