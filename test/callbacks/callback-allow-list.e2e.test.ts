/**
 * CALLBACK_ALLOWED_DESTINATIONS: an operator lets completion callbacks reach receivers inside
 * the deployment (a CIDR range, an address or a host name); every other non-public address
 * stays refused, and reference URLs are not affected by it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { startReceiver } from '../support/receiver.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function world(env: Record<string, string>): Promise<{ gw: TestGateway; api: Client }> {
  // No ALLOW_LOOPBACK_OUTBOUND: loopback is private unless the allow-list says otherwise.
  const gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20', CALLBACK_CHECK_MS: '100', ...env });
  cleanups.push(() => gw.close());
  const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
  return { gw, api: new Client(gw.url, (await newToken(user.client)).key) };
}

async function receiver() {
  const r = await startReceiver(() => 200);
  cleanups.push(() => r.close());
  return r;
}

describe('callback allow-list', () => {
  it('without it a loopback callback is refused at submit', async () => {
    const { api } = await world({});
    const hook = await receiver();
    const r = await api.post('/tune/submit/LYRICS', { prompt: 'a song', hookUrl: hook.url });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('hookUrl');
  });

  it('a CIDR range lets the callback through and it is delivered; a reference to the same range stays refused', async () => {
    const { api } = await world({ CALLBACK_ALLOWED_DESTINATIONS: '10.20.0.0/16, 127.0.0.0/8' });
    const hook = await receiver();
    const r = await api.post('/tune/submit/LYRICS', { prompt: 'a song', hookUrl: hook.url });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await eventually(async () => (hook.received.length > 0 ? true : undefined), 15_000, 100);
    const ref = await api.post('/v1/images/async/generations', {
      model: 'anime-diffusion-4-5-curated',
      prompt: 'edit',
      n: 1,
      image: 'http://127.0.0.1:9/ref.png',
    });
    expect(ref.status).toBe(400);
    // Another private range is still refused for callbacks.
    expect((await api.post('/tune/submit/LYRICS', { prompt: 'a song', hookUrl: 'http://192.168.1.5/hook' })).status).toBe(400);
  });

  it('a host name lets callbacks to that name through, whatever it resolves to', async () => {
    const { api } = await world({ CALLBACK_ALLOWED_DESTINATIONS: 'localhost' });
    const hook = await receiver();
    const url = hook.url.replace('127.0.0.1', 'localhost');
    const r = await api.post('/tune/submit/LYRICS', { prompt: 'a song', hookUrl: url });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await eventually(async () => (hook.received.length > 0 ? true : undefined), 15_000, 100);
    // The address itself is not allowed, only the name.
    expect((await api.post('/tune/submit/LYRICS', { prompt: 'a song', hookUrl: hook.url })).status).toBe(400);
  });

  it('an entry that is no address, range or name fails the configuration', () => {
    expect(() => loadConfig({ CALLBACK_ALLOWED_DESTINATIONS: '10.0.0.0/99' })).toThrow(/CALLBACK_ALLOWED_DESTINATIONS/);
    expect(() => loadConfig({ CALLBACK_ALLOWED_DESTINATIONS: 'http://x' })).toThrow(/CALLBACK_ALLOWED_DESTINATIONS/);
  });
});
