/**
 * The SQLite event store shared by several processes (the roles of the distributed deployment
 * on one machine share DATA_DIR): four writer processes append at once, with optimistic
 * concurrency on one contended stream and group commits on their own streams, while this
 * process follows everything through one subscription (woken by its poll, since no append is
 * made here). Positions must stay unique and contiguous in commit order, every stream's
 * revisions contiguous, no acknowledged append lost, and the subscription must see each event
 * once, in position order.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import type { RecordedEvent } from '../../src/ports/event-store.js';
import { tempDir } from '../support/tmp.js';

const WRITERS = 4;
const ROUNDS = 40;
const PER_ROUND = 6; // one on `shared`, five on the writer's own stream

function runWriter(path: string, writer: string): Promise<{ writer: string; conflicts: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/sqlite-writer.ts', path, writer, String(ROUNDS)], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as { writer: string; conflicts: number }) : reject(new Error(`writer ${writer} exited with ${code}: ${err}`)),
    );
  });
}

describe('SQLite event store shared by several processes', () => {
  it(`${WRITERS} writer processes at once: contiguous positions and revisions, nothing lost, one subscription sees each event once in order`, async () => {
    const dir = tempDir('sqlite-processes-');
    const path = join(dir.path, 'events.sqlite');
    const reader = createSqliteEventStore({ path, pollIntervalMs: 50 });
    try {
      const seen: RecordedEvent[] = [];
      const subscription = reader.subscribe();
      const total = WRITERS * ROUNDS * PER_ROUND;
      const following = (async () => {
        for await (const batch of subscription) {
          seen.push(...batch);
          if (seen.length >= total) return;
        }
      })();

      const results = await Promise.all(Array.from({ length: WRITERS }, (_, w) => runWriter(path, `w${w}`)));
      await Promise.race([
        following,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`the subscription saw ${seen.length} of ${total}`)), 10_000)),
      ]);
      await subscription.close();

      const all = await reader.readAll();
      expect(all).toHaveLength(total);
      expect(all.map((e) => e.position)).toEqual(Array.from({ length: total }, (_, i) => BigInt(i + 1)));
      for (const stream of ['shared', ...results.map((r) => `own-${r.writer}`)]) {
        const events = await reader.readStream(stream);
        expect(
          events.map((e) => e.revision),
          stream,
        ).toEqual(Array.from({ length: events.length }, (_, i) => i));
      }
      // Each writer's shared appends are there once each, in its own order.
      const shared = await reader.readStream('shared');
      for (const { writer } of results) {
        expect(shared.filter((e) => (e.data as { writer: string }).writer === writer).map((e) => (e.data as { round: number }).round)).toEqual(
          Array.from({ length: ROUNDS }, (_, i) => i),
        );
      }
      expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
      // The contended stream really was contended (else this proves little about the revision check).
      expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
    } finally {
      await reader.close();
      dir.remove();
    }
  }, 60_000);
});
