/**
 * The console's static route on a build directory of its own: the page for `/console` and every
 * page path under it, bundles with their content type and cached for good, revalidation, 404 for
 * a missing file, and nothing outside the directory however the path is written.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confinedPath, consoleRoutes, defaultConsoleDir } from '../../src/http/console.js';
import type { GatewayDeps } from '../../src/http/deps.js';
import { applyRouteConfig } from '../../src/http/route-config.js';
import { responseSerializer } from '../../src/http/response-serializer.js';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { tempDir } from '../support/tmp.js';

const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/index-abc123.js"></script>';
const dir = tempDir('console-static-');
const dist = join(dir.path, 'dist');
let app: FastifyInstance;

async function serverFor(root: string): Promise<FastifyInstance> {
  // As the gateway assembles it: the zod compilers and the one onRoute hook that applies the route's declared error shape
  // (src/http/route-config.ts). No console route authenticates, so no key store is needed.
  const server = Fastify();
  server.setValidatorCompiler(validatorCompiler);
  server.setSerializerCompiler(responseSerializer(server.log, 'strict'));
  applyRouteConfig(server, { tokens: {} as GatewayDeps['tokens'], clock: () => new Date() });
  await server.register(consoleRoutes(root));
  return server;
}

beforeAll(async () => {
  mkdirSync(join(dist, 'assets'), { recursive: true });
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log("console")');
  writeFileSync(join(dist, 'assets', 'index-abc123.css'), 'body{}');
  writeFileSync(join(dist, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dir.path, 'secret.txt'), 'outside the build');
  app = await serverFor(dist);
});
afterAll(async () => {
  await app.close();
  dir.remove();
});

describe('the console route', () => {
  it('answers the page for /console, /console/ and every page path, revalidated, with a content security policy', async () => {
    for (const url of ['/console', '/console/', '/console/tasks', '/console/admin/channels', '/console/tasks/']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(200);
      expect(r.body, url).toBe(INDEX);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers['content-security-policy']).toContain("script-src 'self'");
      expect(r.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
    const first = await app.inject({ url: '/console' });
    const again = await app.inject({ url: '/console/ledger', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const head = await app.inject({ method: 'HEAD', url: '/console' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('serves bundles with their content type, cached for good; other files revalidated', async () => {
    const js = await app.inject({ url: '/console/assets/index-abc123.js' });
    expect(js.statusCode).toBe(200);
    expect(js.body).toBe('console.log("console")');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.headers['content-security-policy']).toBeUndefined();
    const css = await app.inject({ url: '/console/assets/index-abc123.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const svg = await app.inject({ url: '/console/logo.svg' });
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.headers['cache-control']).toBe('no-cache');
  });

  it('a missing bundle or file is a 404, never the page', async () => {
    for (const url of ['/console/assets/index-gone.js', '/console/assets/', '/console/favicon.ico', '/console/tasks/x.png']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(404);
      expect(Object.keys(r.json()).sort(), url).toEqual(['code', 'error', 'message']);
      expect(r.json(), url).toMatchObject({ code: 'not_found', error: { code: 'not_found', type: 'invalid_request_error' } });
    }
  });

  it('never answers a file outside the build directory', async () => {
    const attempts = [
      '/console/../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/assets/%2e%2e/%2e%2e/secret.txt',
      '/console/..%2fsecret.txt',
      '/console/%2e%2e%5csecret.txt',
      '/console/..%5csecret.txt',
      '/console/assets/..%2f..%2fsecret.txt',
      '/console/%00index.html',
      `/console/${encodeURIComponent(join(dir.path, 'secret.txt'))}`,
    ];
    for (const url of attempts) {
      const r = await app.inject({ url });
      expect(r.body, url).not.toContain('outside the build');
    }
    expect(confinedPath(dist, '../secret.txt')).toBeUndefined();
    expect(confinedPath(dist, 'assets/../../secret.txt')).toBeUndefined();
    expect(confinedPath(dist, '..\\secret.txt')).toBeUndefined();
    expect(confinedPath(dist, 'a\0b')).toBeUndefined();
    expect(confinedPath(dist, join(dir.path, 'secret.txt'))).toBeUndefined();
    expect(confinedPath(dist, 'assets/index-abc123.js')).toBe(join(dist, 'assets', 'index-abc123.js'));
  });

  it('says how to build the console when there is no build', async () => {
    const empty = await serverFor(join(dir.path, 'not-built'));
    const r = await empty.inject({ url: '/console/tasks' });
    expect(r.statusCode).toBe(404);
    expect(r.json().message).toContain('npm run console:build');
    await empty.close();
  });

  it('finds console/dist of this project by default', () => {
    expect(defaultConsoleDir()).toBe(join(process.cwd(), 'console', 'dist'));
  });
});
