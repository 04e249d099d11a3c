/** Stream-name prefixes as key ranges, for stores whose stream index sorts by code point: SQLite's BINARY collation (memcmp of UTF-8) and PostgreSQL's "C" collation (byte order of UTF-8) alike. */

/**
 * The least string above every string that starts with `prefix`, in code point order
 * (the byte order of UTF-8): the prefix with its last code point raised by
 * one (`account-` → `account.`). Undefined when there is none (an empty prefix, or one of
 * U+10FFFF only): the range is then open above.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // U+D800–U+DFFF are surrogates, not characters: the next one after U+D7FF is U+E000.
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}
