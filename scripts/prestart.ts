/**
 * `npm start`'s first step (prestart):
 * - compiles the gateway to dist/ when its sources changed since the last build
 *   (scripts/gateway-build.ts), so `npm start` runs plain JavaScript;
 * - builds the web console (console/ → console/dist/) when no build is there, so a fresh clone
 *   serves a working /console. An existing console build is kept: `npm run console:build`
 *   rebuilds it after the console's sources change.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ensureGatewayBuilt } from './gateway-build.js';

await ensureGatewayBuilt();

if (!existsSync(new URL('../console/dist/index.html', import.meta.url))) {
  console.log('building the web console (console/dist) …');
  // Loaded only when there is something to build: a start with a build stays quick.
  const { build } = await import('vite');
  await build({ root: fileURLToPath(new URL('../console/', import.meta.url)), logLevel: 'warn' });
}
