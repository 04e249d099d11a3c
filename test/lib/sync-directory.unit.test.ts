import { describe, expect, it } from 'vitest';
import { sharedDirectorySyncs } from '../../src/lib/sync-directory.js';

/** A stand-in for the fsync of a directory that ends when the test says so, and records each start. */
function controlledSyncs() {
  const started: { path: string; end: () => void; fail: (error: Error) => void }[] = [];
  const sync = (path: string) =>
    new Promise<void>((resolve, reject) => {
      started.push({ path, end: resolve, fail: reject });
    });
  return { started, sync };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('sharedDirectorySyncs', () => {
  it('starts an fsync for a caller when none runs, and a fresh one for a caller after it ended', async () => {
    const { started, sync } = controlledSyncs();
    const syncDirectory = sharedDirectorySyncs(sync);
    const first = syncDirectory('/a');
    expect(started).toHaveLength(1);
    started[0]!.end();
    await first;
    const second = syncDirectory('/a');
    expect(started).toHaveLength(2);
    started[1]!.end();
    await second;
  });

  it('makes callers that arrive while an fsync runs wait for the next one, which starts after it and serves them all', async () => {
    const { started, sync } = controlledSyncs();
    const syncDirectory = sharedDirectorySyncs(sync);
    const ended: string[] = [];
    void syncDirectory('/a').then(() => ended.push('first'));
    // Their changes may have come after the running fsync began: it does not cover them.
    void syncDirectory('/a').then(() => ended.push('second'));
    void syncDirectory('/a').then(() => ended.push('third'));
    expect(started).toHaveLength(1);
    started[0]!.end();
    await settled();
    expect(ended).toEqual(['first']);
    expect(started).toHaveLength(2);
    started[1]!.end();
    await settled();
    expect(ended).toEqual(['first', 'second', 'third']);
    expect(started).toHaveLength(2);
  });

  it('rejects every caller of a failed fsync, and none of those waiting for the next one', async () => {
    const { started, sync } = controlledSyncs();
    const syncDirectory = sharedDirectorySyncs(sync);
    const first = syncDirectory('/a');
    const next = syncDirectory('/a');
    started[0]!.fail(new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    await settled();
    expect(started).toHaveLength(2);
    started[1]!.end();
    await expect(next).resolves.toBeUndefined();
  });

  it('keeps directories apart', () => {
    const { started, sync } = controlledSyncs();
    const syncDirectory = sharedDirectorySyncs(sync);
    void syncDirectory('/a');
    void syncDirectory('/b');
    expect(started.map((s) => s.path)).toEqual(['/a', '/b']);
  });
});
