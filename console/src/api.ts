/**
 * The console's only way out: the gateway's HTTP APIs, same origin. Session routes answer the
 * `{success, message, data}` envelope; the generation routes (called with an API key) answer in
 * their family's shape, whose error message is read from whichever field it has.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The message and code of an error answer in any of the gateway's shapes. */
function errorOf(status: number, body: unknown): ApiError {
  if (!isObject(body)) return new ApiError(status, 'http_error', typeof body === 'string' && body ? body : `HTTP ${status}`);
  const nested = isObject(body.error) ? body.error : undefined;
  const message = [body.message, nested?.message, body.description].find((m): m is string => typeof m === 'string' && m !== '') ?? `HTTP ${status}`;
  const code = [body.reason, body.code, nested?.code].find((c): c is string => typeof c === 'string') ?? 'http_error';
  return new ApiError(status, code, message);
}

function init(method: string, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

/** Sent on `window` when a session route answers 401: the session ended (expired, signed out elsewhere). */
export const SESSION_ENDED = 'console:session-ended';

/** A session route: the envelope's `data`, or an ApiError with its message. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, init(method, body));
  const payload = await bodyOf(response);
  if (response.status === 401 && path !== '/api/user/login') window.dispatchEvent(new Event(SESSION_ENDED));
  if (!response.ok || !isObject(payload) || payload.success !== true) throw errorOf(response.status, payload);
  return payload.data as T;
}

export const get = <T>(path: string) => api<T>('GET', path);

/** A route called with an API key (generation, query): the answer as the family gives it. */
export async function withKey<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, init(method, body, { authorization: `Bearer ${key}` }));
  const payload = await bodyOf(response);
  if (!response.ok) throw errorOf(response.status, payload);
  return payload as T;
}

/** A route without the envelope and without credentials (`/readyz`): its JSON whatever the status. */
export async function plain<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(path, init('GET', undefined));
  return { status: response.status, body: (await bodyOf(response)) as T };
}

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
