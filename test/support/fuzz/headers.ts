/**
 * Generated headers, credentials, query strings and path parameters. Header values stay
 * within what an HTTP client can put on the wire (visible ASCII, tab, Latin-1 obs-text).
 */
import fc from 'fast-check';

/** Characters a header value may carry: tab, visible ASCII and space, obs-text. */
const headerChar = fc
  .oneof({ weight: 20, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) }, { weight: 1, arbitrary: fc.constantFrom(0x09, 0x80, 0xa0, 0xe9, 0xff) })
  .map((code) => String.fromCharCode(code));

export const headerValue = (maxLength = 80) => fc.string({ unit: headerChar, maxLength }).map((s) => s.trim());

/** How a request authenticates; resolved to real keys and cookies when it is sent. */
export type AuthKind = 'none' | 'garbage' | 'bearer' | 'session' | 'both' | 'rich' | 'admin';

export const authKind: fc.Arbitrary<AuthKind> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<AuthKind>('none') },
  { weight: 3, arbitrary: fc.constant<AuthKind>('garbage') },
  { weight: 4, arbitrary: fc.constant<AuthKind>('bearer') },
  { weight: 2, arbitrary: fc.constant<AuthKind>('session') },
  { weight: 1, arbitrary: fc.constant<AuthKind>('both') },
  { weight: 1, arbitrary: fc.constant<AuthKind>('rich') },
  { weight: 2, arbitrary: fc.constant<AuthKind>('admin') },
);

/** Authorization values that are not a usable key. */
export const garbageAuthorization = fc.oneof(
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Bearer  ',
    'bearer sk-',
    'Basic dXNlcjpwYXNz',
    'Digest username="x"',
    'Bearer a b',
    `Bearer ${'k'.repeat(4000)}`,
    'Bearer sk-\u00e9\u00ff',
    'Token x',
    'Bearer null',
  ),
  headerValue().map((v) => `Bearer ${v}`),
  headerValue(),
);

/** Cookie headers with no valid session. */
export const garbageCookie = fc.oneof(
  fc.constantFrom(
    'gw_session=',
    'gw_session=%ZZ',
    '=;=;;',
    'gw_session=a; gw_session=b',
    'gw_session="unterminated',
    `gw_session=${'s'.repeat(3000)}`,
    ';;;',
    'a=b=c',
  ),
  headerValue().map((v) => `gw_session=${v}`),
  headerValue(),
);

export const idempotencyKey = fc.oneof(
  headerValue(300),
  fc.constantFrom('', ' ', 'k'.repeat(256), 'k'.repeat(257), 'k'.repeat(8000), 'é', '\u00ff\u00fe', '../x', 'null', '0'),
);

export const lastEventId = fc.oneof(
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
  fc.constantFrom(
    '9223372036854775807',
    '9223372036854775808',
    '18446744073709551615',
    '18446744073709551616',
    '-1',
    '-0',
    '0',
    '00000000000000000001',
    '1.0',
    '1e3',
    '0x1f',
    '+1',
    ' 1',
    '\u00b9',
    '1, 2',
    'NaN',
    'Infinity',
  ),
  headerValue(40),
);

export const rangeHeader = fc.oneof(
  fc.constantFrom(
    'bytes=0-0',
    'bytes=0-',
    'bytes=-1',
    'bytes=-0',
    'bytes=5-1',
    'bytes=0-1,2-3',
    'bytes=0-1,0-1,0-1',
    'bytes=999999999-',
    'bytes=0-99999999999999999999999',
    'bytes=99999999999999999999999-',
    'bytes=-99999999999999999999999',
    'items=0-1',
    'bytes',
    'bytes=',
    'bytes=a-b',
    'bytes=--1',
    'bytes=1-2-3',
    'bytes=0-0,',
    `bytes=${'0-0,'.repeat(500)}0-0`,
  ),
  fc.tuple(fc.nat({ max: 5000 }), fc.nat({ max: 5000 })).map(([a, b]) => `bytes=${a}-${b}`),
  headerValue(40),
);

/** Extra headers a request may carry. */
export const extraHeaders = fc.record(
  {
    'idempotency-key': idempotencyKey,
    'last-event-id': lastEventId,
    range: rangeHeader,
    accept: fc.constantFrom('text/event-stream', 'application/xml', '*/*', 'application/json;q=0', ''),
    'x-forwarded-for': fc.oneof(fc.constantFrom('1.2.3.4', '::1', 'unknown', '1.2.3.4, 5.6.7.8', '999.1.1.1'), headerValue(40)),
    'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'x-unknown'),
    'accept-encoding': fc.constantFrom('gzip', 'br;q=1, *;q=0', 'x'),
  },
  { requiredKeys: [] },
);

/** A path parameter: one of `pool` (real ids, other accounts' included), or made up. */
export function pathParam(pool: readonly string[]): fc.Arbitrary<string> {
  const made = fc.oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }),
    fc.constantFrom(
      '',
      ' ',
      '%',
      'a/b',
      'null',
      'undefined',
      '0',
      '-1',
      '__proto__',
      'constructor',
      `task_${'x'.repeat(90)}`,
      'x'.repeat(150),
      '\u0000',
      '\ud800',
    ),
  );
  const values = pool.length ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...pool) }, { weight: 3, arbitrary: made }) : made;
  // `.` and `..` would be resolved away by the URL parser before the request is sent.
  return values.map((v) => (v === '.' || v === '..' ? `${v}x` : v));
}

/** Lone surrogates (which URLs cannot carry) as U+FFFD, like String#toWellFormed. */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** A value as one URL path segment or query component. */
export const urlComponent = (s: string) => encodeURIComponent(wellFormed(s));

/** Query strings: known parameter names and some that should never matter, with odd values. */
export const queryString = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'from',
            'to',
            'model',
            'task_id',
            'after',
            'p',
            'size',
            'variant',
            'exp',
            'sig',
            'status',
            'limit',
            '__proto__',
            'constructor',
            'a[b]',
            'toString',
            '',
          ),
          fc.oneof(
            fc.string({ unit: 'grapheme', maxLength: 20 }),
            fc.constantFrom('-1', '1e999', '99999999999999999999', 'beginning', 'now', '', '2024-13-45', 'NaN', 'video', 'x'.repeat(5000)),
          ),
        ),
        { maxLength: 4 },
      )
      .map((pairs) => pairs.map(([k, v]) => `${urlComponent(k)}=${urlComponent(v)}`).join('&')),
  },
  { weight: 1, arbitrary: fc.constantFrom('from=%zz', 'after=%', 'p=%E0%A4%A', '&&&', '=', 'a=1&a=2&a=3', 'size[]=1', 'from[$gt]=', 'after=1&after=2') },
);
