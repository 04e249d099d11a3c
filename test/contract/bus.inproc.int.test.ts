import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createInprocBus } from '../../src/adapters/inproc/bus.js';
import type { Bus, BusMessage } from '../../src/ports/bus.js';
import { tempDir } from '../support/tmp.js';
import { busContract } from './bus.contract.js';
import { messages, received, unique, waitFor } from './bus.contract-support.js';

busContract('in-process (SQLite log)', async () => {
  const dir = tempDir('bus-contract-');
  const path = join(dir.path, 'bus.sqlite');
  let bus: Bus = createInprocBus({ path });
  return {
    bus,
    async reopen() {
      await bus.close();
      bus = createInprocBus({ path });
      return bus;
    },
    async cleanup() {
      await bus.close();
      dir.remove();
    },
  };
});

describe('in-process bus', () => {
  const dirs: Array<{ remove(): void }> = [];
  const buses: Bus[] = [];
  const open = (path: string, partitions?: number): Bus => {
    const bus = createInprocBus(partitions === undefined ? { path } : { path, partitions });
    buses.push(bus);
    return bus;
  };
  const file = (): string => {
    const dir = tempDir('bus-inproc-');
    dirs.push(dir);
    return join(dir.path, 'bus.sqlite');
  };

  afterEach(async () => {
    for (const bus of buses.splice(0)) await bus.close();
    for (const dir of dirs.splice(0)) dir.remove();
  });

  it('keeps messages and committed offsets in its file across closing and reopening', async () => {
    const path = file();
    const topic = unique('durable');
    const before = messages(6, (i) => `key-${i}`);
    const first = open(path);
    await first.publish(topic, before);
    const done = received();
    await first.consume({ topic, groupId: 'done', handle: done.handle });
    await waitFor('group done to handle everything', () => done.hasAll(before), 5000);
    await first.close();

    const second = open(path);
    const after = messages(6, (i) => `key-${i}`);
    await second.publish(topic, after);
    const resumed = received();
    const fresh = received();
    await second.consume({ topic, groupId: 'done', handle: resumed.handle });
    await second.consume({ topic, groupId: 'new', handle: fresh.handle });
    await waitFor('both groups', () => resumed.hasAll(after) && fresh.hasAll([...before, ...after]), 5000);
    expect(before.filter((m) => resumed.ids().has(m.id))).toEqual([]);
  });

  it('gives a message whose handler keeps failing to the next owner when its partition moves', async () => {
    const bus = open(file(), 1);
    const topic = unique('handover');
    const groupId = unique('g');
    const [stuck] = messages(1, () => 'k') as [BusMessage];
    await bus.publish(topic, [stuck]);
    let failing = 0;
    const failingMember = await bus.consume({
      topic,
      groupId,
      handle: async () => {
        failing++;
        throw new Error('always fails');
      },
    });
    await waitFor('a failed attempt', () => failing > 0, 5000);
    const next = received();
    const closing = failingMember.close();
    await bus.consume({ topic, groupId, handle: next.handle });
    await closing;
    await waitFor('the next owner to get the message', () => next.hasAll([stuck]), 5000);
  });

  it('spreads partitions of the configured count and refuses a bad count', async () => {
    const bus = open(file(), 4);
    expect(bus.partitions).toBe(4);
    expect(bus.partitionOf('foobar')).toBe((-790332482 & 0x7fffffff) % 4);
    expect(() => createInprocBus({ path: file(), partitions: 0 })).toThrow(RangeError);
  });

  it('refuses to publish or consume once closed', async () => {
    const bus = open(file());
    await bus.close();
    await expect(
      bus.publish(
        't',
        messages(1, () => 'k'),
      ),
    ).rejects.toThrow(/closed/);
    await expect(bus.consume({ topic: 't', groupId: 'g', handle: async () => undefined })).rejects.toThrow(/closed/);
    await expect(bus.ping()).rejects.toThrow(/closed/);
  });
});
