/**
 * The built-in simulator on the started gateway (docs/decisions/0140-simulator-off-by-default-and-limited.md):
 * - `SIMULATOR=auto` (the default) mounts it only when nothing else is configured: not when the
 *   bootstrap file names a real channel, nor the store holds one (created through the admin API),
 *   nor with NODE_ENV=production;
 * - mounted, `/_sim` is rate-limited (per address), shed under load and body-bound like any route;
 * - its traffic is counted apart in /metrics (gateway_simulator_http_*), not with clients'.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { adminClient, startGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/tmp.js';

const SUBMITS = '/_sim/_submits';
const MiB = 1024 * 1024;

const started: TestGateway[] = [];
async function start(env: Record<string, string>, options: Parameters<typeof startGateway>[1] = {}): Promise<TestGateway> {
  // Health checks off: they would call the simulator from this same address.
  const gw = await startGateway({ CHANNEL_HEALTH_INTERVAL_MS: '0', ...env }, options);
  started.push(gw);
  return gw;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((gw) => gw.close()));
});

const channelIds = (gw: TestGateway) => gw.gateway.deps.catalog.channels().map((c) => c.channelId);

describe('SIMULATOR=auto: mounted only when no real channel is configured and not in production', () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it('a fresh store with no bootstrap file (the development default): mounted, its channels seeded', async () => {
    const gw = await start({ SIMULATOR: 'auto' });
    expect((await fetch(gw.url + SUBMITS)).status).toBe(200);
    expect(channelIds(gw)).toContain('sim-images');
  });

  it('a bootstrap file naming a real channel: /_sim is not mounted', async () => {
    const file = join(dir.path, 'bootstrap.json');
    writeFileSync(
      file,
      JSON.stringify({
        channels: [
          { id: 'vendor', name: 'vendor', family: 'images', baseUrl: 'https://images.vendor.example', key: 'k', models: ['anime-diffusion-4-5-full'] },
        ],
      }),
    );
    const gw = await start({ SIMULATOR: 'auto', BOOTSTRAP_FILE: file });
    const r = await fetch(gw.url + SUBMITS);
    expect(r.status).toBe(404);
    expect(
      await fetch(`${gw.url}/_sim/v1/images/generations`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then(
        (x) => x.status,
      ),
    ).toBe(404);
    expect(channelIds(gw)).toEqual(['vendor']);
  });

  it('a real channel created through the admin API: the next start does not mount /_sim, and says which channels still point at it', async () => {
    const data = tempDir();
    try {
      const first = await start({ SIMULATOR: 'auto' }, { dataDir: data.path, keepData: true });
      expect((await fetch(first.url + SUBMITS)).status).toBe(200);
      const admin = await adminClient(first);
      const created = await admin.post('/api/channel/', {
        name: 'real',
        family: 'images',
        base_url: 'https://images.vendor.example',
        key: 'k',
        models: ['anime-diffusion-4-5-full'],
      });
      expect(created.status).toBe(200);
      await first.close();
      started.splice(started.indexOf(first), 1);

      const lines: Array<Record<string, unknown>> = [];
      const { default: pino } = await import('pino');
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
      const second = await start({ SIMULATOR: 'auto' }, { dataDir: data.path, keepData: true, log });
      expect((await fetch(second.url + SUBMITS)).status).toBe(404);
      expect(lines).toContainEqual(
        expect.objectContaining({ level: 30, simulator: false, why: expect.stringMatching(/^SIMULATOR=auto and a real channel is configured/) }),
      );
      const warning = lines.find((l) => l.level === 40 && String(l.msg).includes('which is not mounted'));
      expect(warning?.channels).toContain('sim-images');
    } finally {
      data.remove();
    }
  });

  it('NODE_ENV=production: not mounted, nothing seeded; SIMULATOR=1 still mounts it', async () => {
    const prod = await start({ SIMULATOR: 'auto', NODE_ENV: 'production' });
    expect((await fetch(prod.url + SUBMITS)).status).toBe(404);
    expect(channelIds(prod)).toEqual([]);
    const explicit = await start({ SIMULATOR: '1', NODE_ENV: 'production' });
    expect((await fetch(explicit.url + SUBMITS)).status).toBe(200);
  });
});

describe('/_sim, when mounted, is limited like any route', () => {
  it('rate-limited per address at RATE_LIMIT_PER_MINUTE, whatever bearer it is sent: 429 with Retry-After', async () => {
    const gw = await start({ SIMULATOR: '1', RATE_LIMIT_PER_MINUTE: '3' });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(gw.url + SUBMITS, { headers: { authorization: `Bearer any-key-${i}` } })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await fetch(gw.url + SUBMITS, { headers: { authorization: 'Bearer yet-another-key' } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toEqual({
      code: 'rate_limited',
      message: expect.stringMatching(/^the simulator takes 3 requests per minute from one address; retry in \d+ s$/),
    });
    // The health checks are still never limited.
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  it('shed under load (MAX_HEAP_USED_BYTES) like the client routes, while the health checks answer', async () => {
    const gw = await start({ SIMULATOR: '1', MAX_HEAP_USED_BYTES: '1' });
    let shed: Response | undefined;
    for (let i = 0; i < 50 && shed === undefined; i++) {
      const r = await fetch(gw.url + SUBMITS);
      if (r.status === 429) shed = r;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(shed?.status).toBe(429);
    expect(shed?.headers.get('retry-after')).toBe('1');
    expect(await shed?.json()).toEqual({ code: 'overloaded', message: expect.stringMatching(/^server: overloaded \(heap/) });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  it('bodies bound at the gateway’s 40 MiB; only the picgen edits path takes the forms’ files as Base64 (over 40 MiB)', async () => {
    const gw = await start({ SIMULATOR: '1' });
    const json = (size: number, extra: Record<string, unknown>) => JSON.stringify({ ...extra, prompt: 'x'.repeat(size) });
    const over = await fetch(`${gw.url}/_sim/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer simulator' },
      body: json(41 * MiB, { model: 'anime-diffusion-4-5-full' }),
    });
    expect(over.status).toBe(413);
    const edits = await fetch(`${gw.url}/_sim/v1/images/edits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer simulator' },
      body: JSON.stringify({ model: 'vendor-picgen-4-0-250828', prompt: 'large', image: [`data:image/png;base64,${'A'.repeat(45 * MiB)}`] }),
    });
    expect(edits.status).toBe(200);
  }, 60_000);
});

describe('/metrics counts the simulator’s traffic apart', () => {
  it('a request to /_sim is in gateway_simulator_http_requests_total, not in gateway_http_requests_total', async () => {
    const token = 'metrics-token-0123456789';
    const gw = await start({ SIMULATOR: '1', METRICS_TOKEN: token });
    for (let i = 0; i < 2; i++) expect((await fetch(gw.url + SUBMITS)).status).toBe(200);
    expect((await fetch(`${gw.url}/_sim/no/such/route`)).status).toBe(404);
    expect((await fetch(`${gw.url}/v1/models`)).status).toBe(401);
    const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const lines = text.split('\n');
    expect(lines).toContain('gateway_simulator_http_requests_total{method="GET",route="/_sim/_submits",status="200",role="all"} 2');
    expect(lines.filter((l) => l.startsWith('gateway_simulator_http_requests_total') && l.includes('status="404"'))).toHaveLength(1);
    // Clients' series hold no simulator path, and do hold the client's request.
    expect(lines.filter((l) => l.startsWith('gateway_http_request') && l.includes('_sim'))).toEqual([]);
    expect(lines).toContain('gateway_http_requests_total{method="GET",route="/v1/models",status="401",role="all"} 1');
  });
});
