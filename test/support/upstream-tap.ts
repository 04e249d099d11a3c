/**
 * A counting proxy in front of the built-in simulator, for tests with several gateway
 * processes. Each process gets its own SIMULATOR_URL `<tap>/<name>`: its channel base `/_sim`
 * becomes `<tap>/<name>/_sim`, so every upstream request is recorded with the process that made
 * it, then forwarded (Host kept: the simulator's file URLs point back at the tap, a trusted
 * origin for the caller) to the gateway that serves `/_sim`.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

export interface TappedRequest {
  /** The process that made the request (`direct` for URLs without a name, e.g. result files). */
  who: string;
  method: string;
  /** Path below the simulator's origin, e.g. `/_sim/v1/images/async/generations`. */
  path: string;
  body: string;
  at: number;
}

export interface UpstreamTap {
  url: string;
  /** SIMULATOR_URL for the process called `name`. */
  simulatorUrlFor(name: string): string;
  requests: TappedRequest[];
  /** Where requests are forwarded: an origin serving `/_sim`. */
  target: string | undefined;
  close(): Promise<void>;
}

/** `delayPostsMs`: each POST (a submit) is held that long before it is forwarded: a slow upstream. */
export async function startUpstreamTap(options: { delayPostsMs?: number } = {}): Promise<UpstreamTap> {
  const requests: TappedRequest[] = [];
  const tap: UpstreamTap = {
    url: '',
    simulatorUrlFor: (name) => `${tap.url}/${name}`,
    requests,
    target: undefined,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const raw = req.url ?? '/';
    const named = /^\/([\w-]+)(\/_sim(?:\/.*)?)$/.exec(raw);
    const who = named ? named[1]! : 'direct';
    const path = named ? named[2]! : raw;
    requests.push({ who, method: req.method ?? 'GET', path, body: body.toString('utf8'), at: Date.now() });
    if (options.delayPostsMs && req.method === 'POST') await new Promise((r) => setTimeout(r, options.delayPostsMs));
    if (!tap.target) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"no simulator behind the tap yet"}');
      return;
    }
    const upstream = httpRequest(
      `${tap.target}${path}`,
      { method: req.method, headers: { ...req.headers, 'content-length': String(body.length) } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: err.message }));
    });
    upstream.end(body);
  }

  const server = createServer((req, res) => void forward(req, res).catch(() => res.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the tap has no address');
  tap.url = `http://127.0.0.1:${address.port}`;
  return tap;
}
