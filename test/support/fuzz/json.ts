/**
 * Generated JSON bodies: random values, near-valid ones (a valid body with one field
 * mutated), absurdly deep nesting and malformed text. Values are kept small while generated:
 * huge strings, deep nesting and raw literals (`1e999`) are markers expanded when the body is
 * serialized, so a failing request prints in a few lines.
 */
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A string value that serializes as something JSON.stringify cannot write. */
const MARK = '\u0000fuzz:';
export const raw = (text: string) => `${MARK}raw:${text}`;
export const huge = (length: number) => `${MARK}huge:${length}`;
export const deep = (kind: 'array' | 'object', depth: number) => `${MARK}deep:${kind}:${depth}`;

function expandMarker(spec: string): string {
  const [what, a, b] = spec.split(':');
  if (what === 'raw') return spec.slice(4);
  if (what === 'huge') return JSON.stringify('x'.repeat(Number(a)));
  const depth = Number(b);
  return a === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** JSON text of a value with markers expanded. */
export function serialize(value: Json): string {
  return JSON.stringify(value).replace(/"\\u0000fuzz:([^"]*)"/g, (_m, spec: string) => expandMarker(spec));
}

/** Own-property set, so `__proto__` becomes a key rather than the prototype. */
function withKey(object: { [key: string]: Json }, key: string, value: Json): { [key: string]: Json } {
  const copy: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(object)) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** Every path to a value inside `value` (the root excluded). */
function pathsOf(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...prefix, i], ...pathsOf(v, [...prefix, i])]);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k])]);
  return [];
}

/** `value` with the node at `path` replaced (or removed, for `undefined`). */
function replaceAt(value: Json, path: ReadonlyArray<string | number>, next: Json | undefined): Json {
  const [head, ...rest] = path;
  if (head === undefined) return next ?? null;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && next === undefined) copy.splice(Number(head), 1);
    else copy[Number(head)] = replaceAt(copy[Number(head)] ?? null, rest, next);
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (k !== String(head)) Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
      else if (rest.length > 0 || next !== undefined)
        Object.defineProperty(copy, k, { value: rest.length ? replaceAt(v, rest, next) : next, enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }
  return value;
}

function objectAt(value: Json, path: ReadonlyArray<string | number>): boolean {
  let node: Json = value;
  for (const step of path) node = (node as Record<string, Json>)[step as string] ?? null;
  return node !== null && typeof node === 'object' && !Array.isArray(node);
}

function addKeyAt(value: Json, path: ReadonlyArray<string | number>, key: string, added: Json): Json {
  if (path.length === 0) return withKey(value as { [key: string]: Json }, key, added);
  const [head, ...rest] = path;
  const parent = value as Record<string, Json>;
  return replaceAt(value, [head!], addKeyAt(parent[head as string] ?? {}, rest, key, added));
}

export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf'];

/** Wrong types, out-of-range and NaN-like numbers, awkward unicode, huge and deep values. */
export const wrongValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(0, -1, 1.5, -0.5, true, false, null, [], {}, '', ' ', 'x', [null], { a: 1 }, [[[]]]),
  fc.constantFrom(raw('1e999'), raw('-1e999'), raw('1e-400'), raw('123456789012345678901234567890'), raw('-0'), raw('9007199254740993'), raw('0.1e1')),
  fc.constantFrom<Json>('NaN', 'Infinity', '-Infinity', '1e309', '0x10', '１２', '٣', 'null', 'undefined', 'true', '[]', '{}', '-1', '1.0'),
  fc.constantFrom<Json>(-(2 ** 53), 2 ** 53 + 2, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 31, -(2 ** 31), 2 ** 63, -(2 ** 63)),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom<Json>(
    '\u0000',
    '\ud800',
    '\udfff',
    'a\ud800b',
    '\u202eevil',
    '\ufeff',
    'a\u0000b',
    '💥'.repeat(100),
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "'; DROP TABLE x; --",
    '%00',
    '${jndi:ldap://x}',
    'http://127.0.0.1:1/',
    'http://169.254.169.254/latest/meta-data',
    'file:///etc/passwd',
    'data:image/png;base64,!!!!',
    'data:;base64,',
    'javascript:alert(1)',
    'https://',
    '[sim:unknown]',
    'Z̷̡̛a̸l̷g̶o̵',
    'ﷺ'.repeat(50),
  ),
  fc.constantFrom(huge(100_000), huge(1_000_000)),
  fc.constantFrom(deep('array', 70), deep('object', 300), deep('array', 60), deep('object', 63)),
  fc.constant<Json>(Array.from({ length: 2000 }, () => 'x')),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);

/** A valid body with one field mutated, removed, or a prototype-named key added. */
export function nearValid(template: Json): fc.Arbitrary<Json> {
  const paths = pathsOf(template);
  const objects = [[], ...paths.filter((p) => objectAt(template, p))];
  const mutate = paths.length ? fc.tuple(fc.constantFrom(...paths), wrongValue).map(([path, value]) => replaceAt(template, path, value)) : wrongValue;
  const remove = paths.length ? fc.constantFrom(...paths).map((path) => replaceAt(template, path, undefined)) : fc.constant(template);
  const protoKey = fc
    .tuple(
      fc.constantFrom(...objects),
      fc.constantFrom(...PROTOTYPE_KEYS),
      fc.oneof(fc.constant<Json>({ polluted: true }), fc.constant<Json>({ prototype: { polluted: true } }), wrongValue),
    )
    .map(([path, key, value]) => addKeyAt(template, path, key, value));
  return fc.oneof({ weight: 6, arbitrary: mutate }, { weight: 1, arbitrary: remove }, { weight: 2, arbitrary: protoKey });
}

/** Nesting far past any real body, at the top or inside a field. */
export function deeplyNested(template: Json | undefined): fc.Arbitrary<Json> {
  const depth = fc.constantFrom(65, 100, 1_000, 20_000, 100_000);
  const kind = fc.constantFrom<'array' | 'object'>('array', 'object');
  const top = fc.tuple(kind, depth).map(([k, d]) => deep(k, d));
  if (!template || typeof template !== 'object' || Array.isArray(template)) return top;
  const keys = Object.keys(template);
  const inside = fc.tuple(fc.constantFrom(...keys), kind, depth).map(([key, k, d]) => replaceAt(template, [key], deep(k, d)));
  return keys.length ? fc.oneof(top, inside) : top;
}

/** Text that is not the JSON it claims to be (or not an object). */
export function malformedJson(template: Json | undefined): fc.Arbitrary<string> {
  const text = serialize(template ?? {});
  return fc.oneof(
    fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut)),
    fc.constantFrom(`${text}}`, `${text}x`, `${text}\u0000`, `\ufeff${text}`, `${text},${text}`, text.replace(/"/g, "'"), text.replace(/"(\w+)":/g, '$1:')),
    fc.constantFrom(
      '',
      ' ',
      '\n',
      'null',
      '"text"',
      '123',
      'true',
      '[]',
      '[1,]',
      '{"a":1,}',
      '{"a":}',
      'NaN',
      '{"a":NaN}',
      '{"a":undefined}',
      '/* c */{}',
      '{"a":"\\x"}',
      '{"a":"\\ud800"}',
    ),
    fc.constantFrom(
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"a":{"__proto__":[]}}',
      '{"model":"a","model":"b"}',
    ),
  );
}
