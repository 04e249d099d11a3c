/** The engine's refusals get their HTTP status, code, message and field at the edge. */
import { describe, expect, it } from 'vitest';
import { Refusal, type RefusalKind } from '../../src/domain/refusal.js';
import { normalizeError, renderError, STATUS_OF_REFUSAL } from '../../src/http/errors.js';

describe('engine refusals at the HTTP edge', () => {
  it('each kind has its status, and the code, message and field pass through unchanged', () => {
    const expected: Record<RefusalKind, number> = {
      invalid: 400,
      insufficient_quota: 402,
      forbidden: 403,
      not_found: 404,
      client_gone: 408,
      conflict: 409,
      gone: 410,
      too_large: 413,
      internal: 500,
      upstream_failed: 502,
      upstream_timeout: 504,
    };
    expect(STATUS_OF_REFUSAL).toEqual(expected);
    const err = normalizeError(new Refusal('conflict', 'idempotency_key_reused', 'Idempotency-Key: reused', 'Idempotency-Key'));
    expect({ status: err.status, code: err.code, message: err.message, param: err.param }).toEqual({
      status: 409,
      code: 'idempotency_key_reused',
      message: 'Idempotency-Key: reused',
      param: 'Idempotency-Key',
    });
    expect(renderError('openai', err)).toEqual({
      error: { message: 'Idempotency-Key: reused', type: 'invalid_request_error', param: 'Idempotency-Key', code: 'idempotency_key_reused' },
    });
  });
});
