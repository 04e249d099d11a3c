import { expect } from 'vitest';
import type { RefusalKind } from '../../src/domain/refusal.js';

/**
 * Matches a refusal (src/domain/refusal.ts) of this kind and code, and field when given: for
 * `toThrow(...)`, `rejects.toEqual(...)` and `toEqual(...)`.
 */
export function refused(kind: RefusalKind, code: string, param?: string): unknown {
  return expect.objectContaining({ name: 'Refusal', kind, code, ...(param === undefined ? {} : { param }) });
}

/** Matches a refusal that passes with time (`Throttled`) with this code. */
export function throttled(code: string): unknown {
  return expect.objectContaining({ name: 'Throttled', code });
}
