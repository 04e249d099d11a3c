/**
 * An upstream that goes down and comes back when a test says so: it speaks the async images
 * (spec 4.9/4.10) and std-image (4.5) protocols with inline (Base64) images, and while `down`
 * answers every request 503. It counts what the gateway sent it, by kind, so a test can tell
 * whether a channel was called at all, and logs every request with its Authorization header, so
 * a test sees which channel key the gateway sent.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { HEALTH_CHECK_TASK_ID } from '../../src/engine/channels/channel-probe.js';
import { SMALL_PNG } from './hostile-upstream.js';

export interface FlakyUpstream {
  url: string;
  /** While true every request is answered 503. */
  down: boolean;
  /** Requests received (answered or not), by kind. */
  readonly calls: { submits: number; polls: number; syncCalls: number; healthChecks: number };
  /** `<method> <path> <authorization header>` of every request, in arrival order. */
  readonly requests: string[];
  close(): Promise<void>;
}

const ASYNC_PATH = '/v1/images/async/generations';
const SYNC_PATH = '/v1/images/generations';

export async function startFlakyUpstream(): Promise<FlakyUpstream> {
  const calls = { submits: 0, polls: 0, syncCalls: 0, healthChecks: 0 };
  const tasks = new Set<string>();
  let seq = 0;
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const image = { b64_json: SMALL_PNG.toString('base64') };

  const state: FlakyUpstream = {
    url: '',
    down: false,
    calls,
    requests: [],
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    state.requests.push(`${req.method} ${path} ${req.headers.authorization ?? ''}`);
    if (req.method === 'POST' && path === ASYNC_PATH) calls.submits++;
    else if (req.method === 'POST' && path === SYNC_PATH) calls.syncCalls++;
    else if (path === `${ASYNC_PATH}/${HEALTH_CHECK_TASK_ID}`) calls.healthChecks++;
    else if (req.method === 'GET' && path.startsWith(`${ASYNC_PATH}/`)) calls.polls++;
    if (state.down) return json(res, 503, { error: { message: 'down for maintenance' } });
    if (req.method === 'POST' && path === ASYNC_PATH) {
      const id = `flaky-${++seq}`;
      tasks.add(id);
      return json(res, 200, { id, object: 'image.task', status: 'queued', progress: '0%', data: [] });
    }
    if (req.method === 'POST' && path === SYNC_PATH) return json(res, 200, { created: Math.floor(Date.now() / 1000), data: [image] });
    const id = path.startsWith(`${ASYNC_PATH}/`) ? path.slice(ASYNC_PATH.length + 1) : '';
    if (req.method === 'GET' && tasks.has(id)) return json(res, 200, { id, object: 'image.task', status: 'completed', progress: '100%', data: [image] });
    return json(res, 404, { error: { code: 'task_not_exist', message: 'no such task' } });
  };
  // Bodies are read (and ignored) before answering, so the gateway's request completes.
  const server = createServer((req, res) => {
    req.resume();
    req.once('end', () => handle(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  state.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return state;
}
