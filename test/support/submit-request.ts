/** A caller with its own funded account, and a submit request of it, for tests that call `submitTask` directly. */
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../src/engine/accounts/caller.js';
import { authenticate } from '../../src/http/auth/bearer.js';
import { adminClient, newToken, newUser, type TestGateway } from './gateway.js';

export async function callerFor(gw: TestGateway, credit: number): Promise<{ caller: Caller; accountId: string }> {
  const admin = await adminClient(gw);
  const user = await newUser(admin, { credit });
  const { key } = await newToken(user.client);
  const request = { headers: { authorization: `Bearer ${key}` }, ip: '127.0.0.1' } as unknown as FastifyRequest;
  return { caller: await authenticate(request, gw.gateway.deps.tokens, new Date()), accountId: user.accountId };
}

/** One image of the priced test model, submitted now. */
export const submitOf = (caller: Caller) => ({
  family: 'image',
  channelFamily: 'images',
  action: 'generate',
  model: 'anime-diffusion-4-5-full',
  caller,
  request: { prompt: 'a cat' },
  units: 1,
  metadata: { at: new Date().toISOString() },
});
