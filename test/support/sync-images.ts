/** Helpers of the synchronous image tests: a user with a key, and what a sync call left in the books. */
import { expect } from 'vitest';
import type { RecordedEvent } from '../../src/ports/event-store.js';
import { adminClient, Client, newToken, newUser, type TestGateway } from './gateway.js';

export async function syncUser(gw: TestGateway, credit = 50_000_000) {
  const admin = await adminClient(gw);
  const user = await newUser(admin, { credit });
  const token = await newToken(user.client);
  return { admin, session: user.client, accountId: user.accountId, key: token.key, api: new Client(gw.url, token.key) };
}

export async function accountEvents(gw: TestGateway, accountId: string): Promise<RecordedEvent[]> {
  return gw.gateway.deps.events.readStream(`account-${accountId}`);
}

const taskIdOf = (e: RecordedEvent): string | undefined => (e.data as { taskId?: string }).taskId;

/** The reservation and its settlement (or release) of the account's latest task. */
export async function lastCall(gw: TestGateway, accountId: string) {
  const events = await accountEvents(gw, accountId);
  const reserved = events.filter((e) => e.type === 'QuotaReserved').at(-1);
  expect(reserved, 'a reservation').toBeDefined();
  const taskId = taskIdOf(reserved!)!;
  const closing = events.filter((e) => (e.type === 'QuotaSettled' || e.type === 'QuotaReleased') && taskIdOf(e) === taskId);
  const task = await gw.gateway.deps.events.readStream(`task-${taskId}`);
  return {
    taskId,
    reserved: reserved!.data as { amount: number; basis: { units: number; tier?: string } },
    closing,
    settled: closing.find((e) => e.type === 'QuotaSettled')?.data as { charged: number; basis: { units: number; tier?: string } } | undefined,
    released: closing.find((e) => e.type === 'QuotaReleased')?.data as { reason: string } | undefined,
    task,
    submitted: task[0]!.data as { family: string; action: string; request: Record<string, unknown>; sync?: boolean },
  };
}

/** Runs `fn` and expects that nothing was appended meanwhile (refusals). */
export async function expectNothingAppended(gw: TestGateway, fn: () => Promise<void>): Promise<void> {
  const head = await gw.gateway.deps.events.headPosition();
  await fn();
  expect(await gw.gateway.deps.events.headPosition()).toBe(head);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A tiny real PNG (1×1), as bytes and as a data URI. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');
export const TINY_PNG_URI = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
