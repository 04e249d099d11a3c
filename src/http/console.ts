/**
 * The web console at `/console`: the static files Vite builds from `console/` into
 * `console/dist/` (`npm run console:build`). The console is a client of the public and session
 * APIs like any other, so serving it is only files: a path confined to the build directory, the
 * content type by extension, hashed bundles (`assets/`) cached for good, `index.html` for
 * `/console` and every other path under it that is not a file (the console routes in the page).
 * No dependency (`@fastify/static`) for a handful of files read whole.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from './errors.js';

export const CONSOLE_PATH = '/console';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Vite names what it emits under `assets/` by content hash: a changed file is a new name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The page loads its scripts and styles from here only and talks to this origin only (style
 * properties set from script are not restricted); result images and media may come from the
 * gateway's PUBLIC_BASE_URL, which need not be this origin.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: http: https:",
  "media-src 'self' blob: http: https:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `console/dist` of the project this module belongs to: the nearest folder above it with a
 * `package.json`. That holds from the sources (`src/http/`) and from the compiled image
 * (`dist/src/http/`, with `console/dist` copied beside `dist/`).
 */
export function defaultConsoleDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'console', 'dist');
}

/** The file a request path names inside `root`, or undefined when it would leave it. */
export function confinedPath(root: string, relative: string): string | undefined {
  if (relative.includes('\0') || relative.includes('\\')) return undefined;
  if (relative.split('/').some((segment) => segment === '..')) return undefined;
  const file = resolve(root, relative);
  return file === root || file.startsWith(root + sep) ? file : undefined;
}

async function fileAt(path: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    const s = await stat(path);
    return s.isFile() ? s : undefined;
  } catch {
    return undefined;
  }
}

export function consoleRoutes(consoleDir: string = defaultConsoleDir()): FastifyPluginAsync {
  const root = resolve(consoleDir);

  async function send(request: FastifyRequest, reply: FastifyReply, path: string, info: { size: number; mtimeMs: number }, immutable: boolean) {
    const type = CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
    reply.header('content-type', type).header('x-content-type-options', 'nosniff');
    if (type.startsWith('text/html')) reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('referrer-policy', 'same-origin');
    if (immutable) return reply.header('cache-control', IMMUTABLE).send(await readFile(path));
    // Everything else is revalidated: the page must pick up a new build's bundle names.
    const etag = `"${createHash('sha1').update(`${path}:${info.size}:${info.mtimeMs}`).digest('base64url')}"`;
    reply.header('cache-control', 'no-cache').header('etag', etag);
    if (request.headers['if-none-match'] === etag) return reply.status(304).send();
    return reply.send(await readFile(path));
  }

  async function serve(request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) {
    const relative = request.params['*'] ?? '';
    const file = relative === '' ? undefined : confinedPath(root, relative);
    if (relative !== '' && file === undefined) throw new GatewayError(404, 'not_found', `no file ${CONSOLE_PATH}/${relative}`);
    const found = file === undefined ? undefined : await fileAt(file);
    if (file !== undefined && found) return send(request, reply, file, found, relative.startsWith('assets/'));
    // A missing bundle or file is a 404, not the page: the browser would run HTML as a script.
    if (relative.startsWith('assets/') || extname(relative) !== '') throw new GatewayError(404, 'not_found', `no file ${CONSOLE_PATH}/${relative}`);
    const index = join(root, 'index.html');
    const indexInfo = await fileAt(index);
    if (!indexInfo) throw new GatewayError(404, 'not_found', 'the console is not built: run `npm run console:build`');
    return send(request, reply, index, indexInfo, false);
  }

  return async (app) => {
    // A missing file answers like any unknown path: the plain error shape. Not part of the API:
    // left out of the OpenAPI document.
    const options = { config: { errorShape: 'plain' }, schema: { hide: true } } as const;
    app.get(CONSOLE_PATH, options, serve);
    app.get(`${CONSOLE_PATH}/*`, options, serve);
  };
}
