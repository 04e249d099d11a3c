/**
 * How deep JSON text nests, measured on the text before it is parsed. Parsed bodies flow into
 * code that walks values recursively (canonical hashes, JSON.stringify when events are
 * appended, schema checks), where an absurdly deep value overflows the stack and would answer
 * 500; no request of the interface nests anywhere near this bound (docs/decisions/0055-json-nesting-bounded-at-64.md).
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from './errors.js';

export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** The index of the quote that ends the string whose opening quote is at `open` (-1: none). */
function endOfString(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let j = quote - 1; j > open && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Whether `text` opens more than `max` arrays/objects inside each other. Linear in the text;
 * strings are skipped with indexOf, so large base64 values cost little. Malformed text is
 * not judged here: the parser refuses it.
 */
export function nestsDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = endOfString(text, i);
      if (end < 0) return false;
      i = end;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * Replaces the JSON body parser of `app` (and the contexts registered in it) with fastify's
 * own (`__proto__` and `constructor` keys refused), preceded by the depth check.
 */
export function limitJsonDepth(app: FastifyInstance, max: number = MAX_JSON_DEPTH): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (nestsDeeperThan(text, max)) {
      done(invalidRequest('body', `JSON nested deeper than ${max} levels`), undefined);
      return;
    }
    void parseJson(request, text, done); // the default parser answers through `done` and returns nothing
  });
}
