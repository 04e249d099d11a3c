/**
 * A declared path asked with a method none of its routes take is 405 with `Allow`, in the error
 * shape of the path's family (src/http/allowed-methods.ts), whatever the request carries: a
 * body-carrying method with no Content-Type (QUERY), a malformed body, no credentials. A path
 * no route declares stays 404. Sent with node:http: fetch refuses TRACE.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

function send(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; allow: string | undefined; body: any }>((resolve, reject) => {
    const req = request(`${gw.url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, allow: res.headers.allow, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('an undeclared method on a declared path is 405 with Allow', () => {
  it('QUERY without a Content-Type, on a session path: the api shape', async () => {
    const r = await send('QUERY', '/api/token/7');
    expect(r.status).toBe(405);
    expect(r.allow).toBe('DELETE');
    expect(r.body).toEqual({ success: false, message: 'method: QUERY is not allowed on /api/token/7 (it allows DELETE)', code: 'method_not_allowed' });
  });

  it('on a collection: every method it takes, also to a method with a body (never read)', async () => {
    const trace = await send('TRACE', '/api/token/');
    expect(trace.status).toBe(405);
    // Not DELETE: `DELETE /api/token/:id` with an empty id names no token.
    expect(trace.allow).toBe('GET, HEAD, POST, PUT');
    // DELETE /api/token/:id with an empty id names no token: DELETE is not a method of the collection.
    const remove = await send('DELETE', '/api/token/?p=0');
    expect(remove.status).toBe(405);
    expect(remove.allow).toBe('GET, HEAD, POST, PUT');
    const patch = await send('PATCH', '/api/token/', { 'content-type': 'application/json' }, '{not json');
    expect(patch.status).toBe(405);
    expect(patch.allow).toBe('GET, HEAD, POST, PUT');
  });

  it('on a family path, in its shape (openai, plain)', async () => {
    const openai = await send('PUT', '/v1/videos/task_1/content', { 'content-type': 'text/plain' }, 'x');
    expect(openai.status).toBe(405);
    expect(openai.allow).toBe('GET, HEAD');
    expect(openai.body).toEqual({
      error: {
        message: 'method: PUT is not allowed on /v1/videos/task_1/content (it allows GET, HEAD)',
        type: 'invalid_request_error',
        param: 'method',
        code: 'method_not_allowed',
      },
    });
    const plain = await send('DELETE', '/tune/fetch/x?y=1');
    expect(plain.status).toBe(405);
    expect(plain.allow).toBe('GET, HEAD');
    expect(plain.body).toMatchObject({ code: 'method_not_allowed', message: 'method: DELETE is not allowed on /tune/fetch/x (it allows GET, HEAD)' });
  });

  it('a path no route declares stays 404, whatever the method', async () => {
    for (const method of ['GET', 'TRACE', 'DELETE']) {
      const r = await send(method, '/api/token/7/more');
      expect(r.status, method).toBe(404);
      expect(r.allow, method).toBeUndefined();
    }
  });
});
