/** Helpers of the video families' black-box tests: a funded caller, polling, money per task, MP4 facts. */
import { expect } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway, expectNothingAppendedSince } from './gateway.js';
import { FAST_ENGINE } from './images.js';

export interface VideoWorld {
  gw: TestGateway;
  admin: Client;
  api: Client;
  key: string;
  accountId: string;
  /** The caller's session (to make more tokens). */
  session: Client;
}

export async function startVideoWorld(credit = 500_000_000): Promise<VideoWorld> {
  const gw = await startGateway(FAST_ENGINE);
  const admin = await adminClient(gw);
  const user = await newUser(admin, { credit });
  const key = (await newToken(user.client)).key;
  return { gw, admin, api: new Client(gw.url, key), key, accountId: user.accountId, session: user.client };
}

/** Another funded account with its own key (BOLA checks, small balances). */
export async function otherCaller(world: VideoWorld, credit = 10_000_000): Promise<{ api: Client; accountId: string }> {
  const user = await newUser(world.admin, { credit });
  return { api: new Client(world.gw.url, (await newToken(user.client)).key), accountId: user.accountId };
}

/** Polls `path` until `isFinal(body)`; fails on any non-200 answer. */
export async function pollUntil(api: Client, path: string, isFinal: (body: any) => boolean, timeoutMs = 15_000): Promise<any> {
  return eventually(
    async () => {
      const r = await api.get(path);
      if (r.status !== 200) throw new Error(`poll ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return isFinal(r.body) ? r.body : undefined;
    },
    timeoutMs,
    30,
  );
}

/** Calls `request`, expecting a refusal that appends nothing to the event store. */
export async function refusedWithoutAppend(gw: TestGateway, request: () => Promise<{ status: number; body: any; headers: Headers }>) {
  const head = await gw.gateway.deps.events.headPosition();
  const reply = await request();
  await expectNothingAppendedSince(gw, head, reply);
  return reply;
}

export interface TaskMoney {
  reserved: number;
  basis: { unitPrice: number; units: number; tier?: string; extra?: number };
  settled?: { actual: number; charged: number; basis: { unitPrice: number; units: number; tier?: string }; deliveredUnits?: number };
  released?: number;
}

/** What the account stream says about one task, once the settler has caught up. */
export async function moneyOf(gw: TestGateway, accountId: string, taskId: string): Promise<TaskMoney> {
  const { events, runner } = gw.gateway.deps;
  await gw.gateway.engine.settler.caughtUp(await events.headPosition());
  await runner.waitFor(await events.headPosition());
  const recorded = await events.readStream(`account-${accountId}`);
  const of = (type: string) => recorded.find((e) => e.type === type && (e.data as { taskId: string }).taskId === taskId)?.data as any;
  const reserved = of('QuotaReserved');
  const settled = of('QuotaSettled');
  const released = of('QuotaReleased');
  return {
    reserved: reserved.amount,
    basis: reserved.basis,
    ...(settled
      ? {
          settled: {
            actual: settled.actual,
            charged: settled.charged,
            basis: settled.basis,
            ...(settled.deliveredUnits !== undefined ? { deliveredUnits: settled.deliveredUnits } : {}),
          },
        }
      : {}),
    ...(released ? { released: released.amount } : {}),
  };
}

/** The TaskSubmitted data of a task (what the gateway recorded and sends upstream). */
export async function submittedOf(gw: TestGateway, taskId: string): Promise<any> {
  const [first] = await gw.gateway.deps.events.readStream(`task-${taskId}`, { maxCount: 1 });
  return first?.data;
}

export async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/**
 * Duration (from `mvhd`) and frame size (from `tkhd`) of an MP4 made by the simulator; checks that
 * its video track is H.264 (`avc1`, what browsers play) whose sample entry states the same size.
 */
export function mp4Info(bytes: Buffer): { seconds: number; width: number; height: number } {
  expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  const mvhd = bytes.indexOf('mvhd', 0, 'latin1');
  const tkhd = bytes.indexOf('tkhd', 0, 'latin1');
  expect(mvhd).toBeGreaterThan(0);
  // mvhd v0 after the type: version+flags 4, creation 4, modification 4, timescale 4, duration 4.
  const timescale = bytes.readUInt32BE(mvhd + 4 + 12);
  const duration = bytes.readUInt32BE(mvhd + 4 + 16);
  // tkhd v0 ends with width and height as 16.16 fixed point.
  const width = bytes.readUInt32BE(tkhd + 4 + 76) >>> 16;
  const height = bytes.readUInt32BE(tkhd + 4 + 80) >>> 16;
  // stsd: version+flags 4, entry count 4, then the entry's size and type (`avc1`), 6 reserved, data
  // reference index 2, 16 more, then its width and height (16 bits each).
  const stsd = bytes.indexOf('stsd', 0, 'latin1');
  expect(bytes.toString('latin1', stsd + 16, stsd + 20)).toBe('avc1');
  expect({ width: bytes.readUInt16BE(stsd + 16 + 28), height: bytes.readUInt16BE(stsd + 16 + 30) }).toEqual({ width, height });
  return { seconds: duration / timescale, width, height };
}

/** Waits until every reservation of the account is closed (all its tasks ended and settled). */
export async function nothingReserved(gw: TestGateway, accountId: string, timeoutMs = 20_000): Promise<void> {
  await eventually(
    async () => {
      const doc = await gw.gateway.deps.views.get<{ reserved: number }>('accounts', accountId);
      return doc?.doc.reserved === 0 ? true : undefined;
    },
    timeoutMs,
    50,
  );
}
