/**
 * The error bodies of the `{code, message}` families (src/http/errors.ts), as exact `toEqual`
 * expectations: the spec's fields, and the openai `error` object beside them that carries the
 * same message and the precise code.
 */
import { expect } from 'vitest';

/** The OpenAI `error` object: `param` is the field at fault, or ''; `type` server_error on a 5xx. */
export function openaiErrorBody(code: string, message: unknown = expect.any(String), param: unknown = expect.any(String), type = 'invalid_request_error') {
  return { message, type, param, code };
}

/** `{code, message, error}` of the plain shape (sync and picgen images, motion, queries). */
export function plainError(code: string, message: unknown = expect.any(String), param?: string, type?: string) {
  return { code, message, error: openaiErrorBody(code, message, param, type) };
}

/** A refused async image or tune submit: `code` is `invalid_request`, the precise one is `reason`. */
export function submitError(reason: string, message: unknown = expect.any(String), param?: string) {
  return { code: 'invalid_request', reason, message, error: openaiErrorBody(reason, message, param) };
}
