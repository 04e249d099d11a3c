/**
 * The in-process test gateways answer strictly (test/support/gateway.ts): an answer that drifts
 * from its route's declared response schema fails the request, so it fails the test that made
 * it, instead of being sent as produced and logged (production's `RESPONSE_SCHEMAS=log`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RoutePlugin } from '../../src/http/server.js';
import { startGateway, type TestGateway } from '../support/gateway.js';

/** A route whose handler answers other than it declares. */
const drifting: RoutePlugin = () => async (app) => {
  app.get('/_test/drift', { schema: { response: { 200: z.object({ count: z.number() }) } } }, async () => ({ count: 'three' }));
};

const started: TestGateway[] = [];
afterEach(async () => {
  for (const gw of started.splice(0)) await gw.close();
});

describe('in-process test gateways check answers against their schemas', () => {
  it('fail an answer that drifts from its declared schema', async () => {
    const gw = await startGateway({ CHANNEL_HEALTH_INTERVAL_MS: '0' }, { extraRoutes: [drifting] });
    started.push(gw);
    expect(gw.config.responseSchemas).toBe('strict');
    expect((await fetch(`${gw.url}/_test/drift`)).status).toBe(500);
  });

  it('send it as produced when a test asks for production behaviour (log)', async () => {
    const gw = await startGateway({ RESPONSE_SCHEMAS: 'log', CHANNEL_HEALTH_INTERVAL_MS: '0' }, { extraRoutes: [drifting] });
    started.push(gw);
    const res = await fetch(`${gw.url}/_test/drift`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ count: 'three' });
  });
});
