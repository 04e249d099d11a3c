/**
 * A channel created moments before a submit may not yet be in the dispatching process's catalog
 * (another instance wrote it; that catalog refreshes on a timer): the dispatcher looks again
 * instead of failing the task for want of a channel.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/engine/channels/catalog.js';
import { dispatchTask } from '../../src/engine/dispatch/dispatcher.js';
import { createSubmitLeaseMemory } from '../../src/engine/dispatch/submit-lease-memory.js';
import { upstreamAdapters } from '../../src/families/index.js';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20' });
  // This test dispatches by hand, with a catalog of its own.
  await gw.gateway.engine.dispatcher.stop();
});
afterAll(() => gw.close());

describe('dispatch to a channel the catalog does not know yet', () => {
  it('refreshes the catalog and dispatches, instead of failing with no_channel_available', async () => {
    const deps = gw.gateway.deps;
    const stale = await createCatalog(deps.views); // taken before the channel exists, never refreshed by commits
    const admin = await adminClient(gw);
    const channel = await admin.post('/api/channel/', {
      name: 'brand new',
      family: 'images',
      base_url: '/_sim',
      key: 'simulator',
      models: ['anime-diffusion-4-5-full'],
      priority: 50,
    });
    expect(channel.status).toBe(200);
    const channelId = channel.body.data.id as string;
    expect(stale.channel(channelId)).toBeUndefined();

    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client, { channel_id: channelId })).key);
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'on the new channel', n: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);

    await dispatchTask(
      {
        ...deps,
        catalog: stale,
        upstreams: new Map(upstreamAdapters.map((a) => [a.family, a])),
        log: pino({ level: 'silent' }),
        onDispatched: () => undefined,
        onClaimedElsewhere: () => undefined,
        instanceId: 'test-instance',
        leases: createSubmitLeaseMemory({ leaseMs: 90_000 }),
      },
      r.body.id,
    );
    const types = (await deps.events.readStream(`task-${r.body.id}`)).map((e) => e.type);
    expect(types).toEqual(['TaskSubmitted', 'UpstreamSubmitClaimed', 'UpstreamSubmitted']);
    stale.close();
  });
});
