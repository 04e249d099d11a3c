/**
 * Where a request names URLs. Each submit route declares the paths of its URL fields in the body
 * the client sent (`metadata.content.*.url`: `*` is every item of an array; `metadata.**` every
 * string anywhere under `metadata`, for objects forwarded upstream as given), and this finds the
 * values with the exact field path (`metadata.content.0.url`) for the URL policy. Pure.
 *
 * Only URL-shaped strings are returned: data URIs and raw Base64 (where a family takes them)
 * are not URLs, and plain text in a forwarded object is not either. URL-shaped means what a
 * WHATWG parser (the upstreams' included) would read as a fetchable URL: a scheme followed by
 * a slash or backslash (`http:/host` parses like `http://host`), a protocol-relative `//host`,
 * or a scheme that fetches without slashes (`file:etc/passwd`).
 */
import { isPlainObject } from './fields.js';

export type UrlUse = 'reference' | 'callback';

export interface UrlFieldSpec {
  path: string;
  /** `callback`: the gateway POSTs to it (no signed asset exception); default `reference`. */
  use?: UrlUse;
}

export interface UrlField {
  param: string;
  url: string;
  use: UrlUse;
}

const SCHEME_AND_SLASH = /^(?:[a-z][a-z0-9+.-]*:[/\\]|[/\\]{2})/i;
const FETCHING_SCHEMES = /^(?:file|gopher|ftp|dict|ldaps?|tftp|sftp|smb|jar|netdoc|wss?|https?):/i;
/** Deeper than any request rule lets a forwarded object be; a bound on the walk itself. */
const MAX_DEPTH = 32;

function isUrlShaped(text: string): boolean {
  // The WHATWG parser drops tabs and newlines anywhere and leading controls and spaces.
  const normalised = text.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  return SCHEME_AND_SLASH.test(normalised) || FETCHING_SCHEMES.test(normalised);
}

const join = (at: string, key: string): string => (at === '' ? key : `${at}.${key}`);

function everyString(value: unknown, at: string, depth: number, found: (param: string, text: string) => void): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') found(at, value);
  else if (Array.isArray(value)) value.forEach((item: unknown, i) => everyString(item, join(at, String(i)), depth + 1, found));
  else if (isPlainObject(value)) for (const [key, item] of Object.entries(value)) everyString(item, join(at, key), depth + 1, found);
}

function follow(value: unknown, segments: readonly string[], at: string, found: (param: string, text: string) => void): void {
  const [head, ...rest] = segments;
  if (head === undefined) {
    if (typeof value === 'string') found(at, value);
  } else if (head === '**') {
    everyString(value, at, 0, found);
  } else if (head === '*') {
    if (Array.isArray(value)) value.forEach((item: unknown, i) => follow(item, rest, join(at, String(i)), found));
  } else if (isPlainObject(value) && Object.hasOwn(value, head)) {
    follow(value[head], rest, join(at, head), found);
  }
}

/** The URL-shaped values at the declared paths, in declaration then document order. */
export function urlFields(body: unknown, specs: readonly UrlFieldSpec[]): UrlField[] {
  const out: UrlField[] = [];
  for (const spec of specs) {
    follow(body, spec.path.split('.'), '', (param, text) => {
      if (isUrlShaped(text)) out.push({ param, url: text, use: spec.use ?? 'reference' });
    });
  }
  return out;
}
