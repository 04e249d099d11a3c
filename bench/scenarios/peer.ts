/**
 * The peer: LiteLLM (the proxy users would pick instead of this gateway) and this gateway, in
 * the same run, in front of the same stand-in OpenAI-style upstream (bench/peer-upstream.ts),
 * which is measured directly too. For each side, each operation (a synchronous image with
 * `response_format: b64_json`, a video submit, a video retrieve) at concurrency 1 (latency: what
 * the proxy adds over the upstream's own) and 32 (throughput), with the CPU time its serving
 * processes spent per request and their peak RSS. Load is bench/load.ts (autocannon), as in
 * every scenario; only the number of connections differs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../test/support/tmp.js';
import { syncImagesCatalog } from '../../src/families/sync-images/catalog.js';
import { vidH3Catalog } from '../../src/families/vid-h3/catalog.js';
import { fundedKey, pool } from '../client.js';
import { ensureLitellm, startLitellm } from '../litellm.js';
import { load, type LoadResult } from '../load.js';
import { cpuSecondsWhenIdle, peakRssOfTree } from '../proc-stats.js';
import { startChild } from '../processes.js';
import { startGatewayProcess } from '../gateway.js';
import { ADMIN_PASSWORD, gatewayEnv } from './http.js';

export const PEER_OPERATIONS = ['image', 'videoSubmit', 'videoRetrieve'] as const;
export type PeerOperation = (typeof PEER_OPERATIONS)[number];
export const PEER_CONCURRENCY = [1, 32] as const;

export interface PeerFigure extends LoadResult {
  concurrency: number;
  /** CPU (user + system) of the serving processes per request, read once they were idle again. */
  cpuMsPerRequest: number;
  /**
   * Mean latency by Little's law (connections × duration / requests): autocannon's percentiles
   * are whole milliseconds, too coarse for what a proxy adds at concurrency 1.
   */
  meanMs: number;
}

export interface PeerTargetResult {
  target: string;
  /** What this side does per request (one sentence, for the report). */
  perRequest: string;
  figures: Record<PeerOperation, PeerFigure[]>;
  /** Sum of the peak RSS (VmHWM) of its serving processes (LiteLLM: supervisor and workers). */
  peakRssBytes: number;
}

export interface PeerResult {
  seconds: number;
  /** The LiteLLM measured, or why it was not. */
  litellm: { version: string; python: string } | { skipped: string };
  targets: PeerTargetResult[];
}

const UPSTREAM_KEY = 'bench-upstream-key';
const IMAGE_BODY = JSON.stringify({ model: 'std-image', prompt: 'bench', size: '1024x1024', response_format: 'b64_json' });
const VIDEO_BODY = JSON.stringify({ model: 'Vid-H3', prompt: 'bench', seconds: '5', size: '768P' });

interface Target {
  name: string;
  perRequest: string;
  url: string;
  key: string;
  /** The process whose tree serves the requests. */
  pid: number;
}

const PER_REQUEST = {
  upstream: 'The stand-in itself (node:http): reads the body and answers a PNG encoded once, or a stateless video object; the floor the proxies add to.',
  litellm:
    'LiteLLM without a database: checks the master key, routes to the deployment, calls the upstream with its OpenAI provider, rebuilds the answer (video ids re-encoded with provider and model), prices it and keeps spend in memory only (nothing durable).',
  gateway:
    'This gateway: checks the key, validates, reserves from the account balance and writes the task events durably (SQLite, synchronous=FULL) before the upstream call; an image is re-hosted in the asset store and the charge settled before the answer; a video submit is answered once accepted durably, then dispatched, polled, downloaded and settled in the background (that work counted in its CPU per request).',
};

async function call(target: Target, method: 'GET' | 'POST', path: string, body?: string): Promise<unknown> {
  const r = await fetch(target.url + path, { method, headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' }, body });
  const text = await r.text();
  // A side that answers errors would be measured answering errors: the run fails instead.
  if (!r.ok) throw new Error(`${target.name}: ${method} ${path} answered ${r.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as unknown;
}

type Request = { method: 'GET' | 'POST'; path: string; body?: string; nextPath?: () => string };

/**
 * Measures one figure after another on `target`. The CPU read once it is idle after a figure is
 * where the next one starts from, so each figure waits for idle once, not twice.
 */
async function meter(target: Target, seconds: number, idleWaitMs: number): Promise<(concurrency: number, o: Request) => Promise<PeerFigure>> {
  let cpu = await cpuSecondsWhenIdle(target.pid, idleWaitMs);
  return async (concurrency, o) => {
    const measured = await load({
      url: target.url + o.path,
      seconds,
      connections: concurrency,
      method: o.method,
      headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
      ...(o.body !== undefined ? { body: o.body } : {}),
      ...(o.nextPath ? { nextPath: o.nextPath } : {}),
    });
    const after = await cpuSecondsWhenIdle(target.pid, idleWaitMs);
    const perRequest = (ms: number) => (measured.requests > 0 ? Math.round((ms * 100) / measured.requests) / 100 : 0);
    const cpuMs = (after - cpu) * 1000;
    cpu = after;
    return { concurrency, cpuMsPerRequest: perRequest(cpuMs), meanMs: perRequest(concurrency * seconds * 1000), ...measured };
  };
}

/** Every operation at each concurrency, after a warm-up that also checks the answers. */
async function measure(target: Target, seconds: number, idleWaitMs: number, log: (line: string) => void): Promise<PeerTargetResult> {
  log(`peer: ${target.name}`);
  await pool(32, 8, () => call(target, 'POST', '/v1/images/generations', IMAGE_BODY));
  const ids = await pool(32, 8, async () => (await call(target, 'POST', '/v1/videos', VIDEO_BODY)) as { id: string });
  await call(target, 'GET', `/v1/videos/${ids[0]!.id}`);
  let next = 0;
  const retrievePath = () => `/v1/videos/${encodeURIComponent(ids[next++ % ids.length]!.id)}`;
  const figures: Record<PeerOperation, PeerFigure[]> = { image: [], videoSubmit: [], videoRetrieve: [] };
  const figure = await meter(target, seconds, idleWaitMs);
  for (const concurrency of PEER_CONCURRENCY) {
    figures.image.push(await figure(concurrency, { method: 'POST', path: '/v1/images/generations', body: IMAGE_BODY }));
    figures.videoSubmit.push(await figure(concurrency, { method: 'POST', path: '/v1/videos', body: VIDEO_BODY }));
    figures.videoRetrieve.push(await figure(concurrency, { method: 'GET', path: retrievePath(), nextPath: retrievePath }));
  }
  return { target: target.name, perRequest: target.perRequest, figures, peakRssBytes: peakRssOfTree(target.pid) };
}

/**
 * The gateway as every scenario starts it (as `npm start` does, embedded default, a fresh DATA_DIR), its
 * channels for std-image and Vid-H3 seeded from a bootstrap file pointing at the stand-in (no
 * simulator); loopback outbound allowed, since the upstream is on loopback.
 */
async function startGatewayOn(port: number, upstreamUrl: string, dataDir: string) {
  const bootstrap = join(dataDir, 'peer-bootstrap.json');
  const channel = (id: string, family: string, models: string[]) => ({
    id,
    name: `stand-in (${family})`,
    family,
    baseUrl: upstreamUrl,
    key: UPSTREAM_KEY,
    models,
  });
  const catalog = [...syncImagesCatalog, ...vidH3Catalog];
  writeFileSync(
    bootstrap,
    JSON.stringify({
      channels: [channel('peer-images', 'images', ['std-image', 'pro-image']), channel('peer-vid-h3', 'vid-h3', ['Vid-H3'])],
      prices: Object.fromEntries(catalog.map((m) => [m.model, m.price])),
    }),
  );
  return startGatewayProcess(port, gatewayEnv(dataDir, { BOOTSTRAP_FILE: bootstrap, SIMULATOR: 'false', ALLOW_LOOPBACK_OUTBOUND: 'true' }));
}

/**
 * `withLitellm: false` (the quick run) measures the upstream and the gateway only. `idleWaitMs`
 * bounds each wait for a target to go idle after a figure (its CPU per request counts the polls
 * of the videos it accepted, which go on for seconds): the quick run, a check of the harness,
 * waits 2 s, not the minute a measuring run allows.
 */
export async function peer(port: number, seconds: number, withLitellm: boolean, log: (line: string) => void, idleWaitMs = 60_000): Promise<PeerResult> {
  const targets: PeerTargetResult[] = [];
  const upstream = await startChild('bench/peer-upstream.ts', port, {}, '/healthz');
  let litellm: PeerResult['litellm'] = { skipped: 'not run (--quick: installing and starting LiteLLM takes a minute)' };
  try {
    targets.push(await measure({ name: 'upstream direct', perRequest: PER_REQUEST.upstream, key: UPSTREAM_KEY, ...upstream }, seconds, idleWaitMs, log));
    if (withLitellm) {
      const install = ensureLitellm(log);
      litellm = 'skipped' in install ? install : { version: install.version, python: install.python };
      if ('skipped' in install) log(`peer: LiteLLM skipped: ${install.skipped}`);
      else {
        for (const workers of [1, 2]) {
          const proxy = await startLitellm(install.bin, port + 1 + workers, workers, upstream.url);
          try {
            const name = `LiteLLM ${install.version}, ${workers} worker${workers > 1 ? 's' : ''}`;
            targets.push(await measure({ name, perRequest: PER_REQUEST.litellm, key: proxy.masterKey, ...proxy }, seconds, idleWaitMs, log));
          } finally {
            await proxy.stop();
          }
        }
      }
    }
    const dir = tempDir('gateway-bench-');
    const gw = await startGatewayOn(port + 4, upstream.url, dir.path);
    try {
      const key = await fundedKey(gw.url, ADMIN_PASSWORD, 1e14);
      targets.push(await measure({ name: 'this gateway', perRequest: PER_REQUEST.gateway, key, ...gw }, seconds, idleWaitMs, log));
    } finally {
      await gw.stop();
      dir.remove();
    }
  } finally {
    await upstream.stop();
  }
  return { seconds, litellm, targets };
}
