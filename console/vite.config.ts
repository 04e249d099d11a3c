/**
 * The web console's build: `npm run console:build` (vite build console) writes console/dist/,
 * which the gateway serves at /console (src/http/console.ts). `npm run console:dev` serves the
 * sources with hot reload and sends the API calls to the gateway `npm start` runs.
 */
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const gateway = 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/console/',
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 200 },
  server: { proxy: Object.fromEntries(['/api', '/v1', '/tune', '/assets', '/readyz'].map((path) => [path, { target: gateway }])) },
});
