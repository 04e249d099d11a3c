import { describe, expect, it } from 'vitest';
import type { Decider } from '../../src/domain/decider.js';
import type { DomainEvent, EventOf } from '../../src/domain/events.js';
import { webhookSecretDecider } from '../../src/domain/webhook-secret.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import { executeCommand, readState } from '../../src/engine/commands/command-handler.js';
import { CONFLICT_RETRIES } from '../../src/engine/commands/conflict-retry.js';
import { Refusal } from '../../src/domain/refusal.js';
import { WrongExpectedRevisionError, type EventStore } from '../../src/ports/event-store.js';
import { withOverrides } from '../support/event-store-overrides.js';
import { useTempEventStore } from '../support/temp-event-store.js';

const meta = () => ({ at: new Date().toISOString() });
const STREAM = 'webhooks-acc1';
const rotated = (secret: string): EventOf<'WebhookSecretRotated'> => ({ type: 'WebhookSecretRotated', data: { secret } });

/**
 * A decider that records what it decided on: state = the secrets so far; `Append` adds one,
 * `Refuse` throws a refusal (as deciders refuse).
 */
const tooMany = new Refusal('conflict', 'too_many', 'secret: too many');
type TestCommand = { type: 'Append'; secret: string } | { type: 'Refuse' };
function recordingDecider(seen: string[][]): Decider<string[], TestCommand, EventOf<'WebhookSecretRotated'>> {
  return {
    decide(command, state) {
      seen.push(state);
      if (command.type === 'Refuse') throw tooMany;
      return [rotated(command.secret)];
    },
    evolve: (state: string[], event: DomainEvent) => (event.type === 'WebhookSecretRotated' ? [...state, event.data.secret] : state),
    initialState: () => [],
  };
}

let store: EventStore;
useTempEventStore((s) => (store = s));

/** The real store, but another writer appends `secret` just before each of our first `times` appends. */
function racedBy(times: number): { store: EventStore; appends: number } {
  const counter = { store: store, appends: 0 };
  counter.store = withOverrides(store, {
    append: async (stream, events, options) => {
      counter.appends++;
      if (counter.appends <= times) await store.append(stream, toNewEvents([rotated(`other-${counter.appends}`)], meta()));
      return store.append(stream, events, options);
    },
  });
  return counter;
}

describe('the command handler', () => {
  it('decides on the folded stream and appends with its revision', async () => {
    const seen: string[][] = [];
    const decider = recordingDecider(seen);
    const first = await executeCommand({ events: store, stream: STREAM, decider, command: { type: 'Append', secret: 'a' }, metadata: meta() });
    const second = await executeCommand({ events: store, stream: STREAM, decider, command: { type: 'Append', secret: 'b' }, metadata: meta() });
    expect(seen).toEqual([[], ['a']]);
    expect([first.revision, second.revision]).toEqual([0, 1]);
    expect(second.state).toEqual(['a', 'b']);
    expect(second.events).toEqual([rotated('b')]);
    expect(second.position).toBeGreaterThan(first.position!);
    expect(await readState(store, STREAM, decider)).toEqual({ state: ['a', 'b'], revision: 1 });
  });

  it('a decision of [] appends nothing', async () => {
    await store.append(STREAM, toNewEvents([rotated('old')], meta()));
    const result = await executeCommand({
      events: store,
      stream: STREAM,
      decider: webhookSecretDecider,
      command: { type: 'EnsureWebhookSecret', data: { secret: 'new' } },
      metadata: meta(),
    });
    expect(result).toEqual({ state: { secret: 'old' }, revision: 0, events: [], position: undefined });
    expect(await store.readStream(STREAM)).toHaveLength(1);
  });

  it('on a conflict reads the stream again and decides again on what the other writer appended', async () => {
    const seen: string[][] = [];
    const raced = racedBy(2);
    const result = await executeCommand({
      events: raced.store,
      stream: STREAM,
      decider: recordingDecider(seen),
      command: { type: 'Append', secret: 'mine' },
      metadata: meta(),
    });
    expect(seen).toEqual([[], ['other-1'], ['other-1', 'other-2']]);
    expect(result.state).toEqual(['other-1', 'other-2', 'mine']);
    expect(result.revision).toBe(2);
    expect((await store.readStream(STREAM)).map((e) => (e.data as { secret: string }).secret)).toEqual(['other-1', 'other-2', 'mine']);
  });

  it('a re-decision may find the command already applied: the first secret wins, once', async () => {
    const raced = racedBy(1);
    const result = await executeCommand({
      events: raced.store,
      stream: STREAM,
      decider: webhookSecretDecider,
      command: { type: 'EnsureWebhookSecret', data: { secret: 'mine' } },
      metadata: meta(),
    });
    expect(result.events).toEqual([]);
    expect(result.state.secret).toBe('other-1');
    expect(await store.readStream(STREAM)).toHaveLength(1);
  });

  it(`gives up after ${CONFLICT_RETRIES} conflicts decided again, throwing the last`, async () => {
    let appends = 0;
    let reads = 0;
    const contended = withOverrides(store, {
      readStream: (s, o) => {
        reads++;
        return store.readStream(s, o);
      },
      append: async (stream) => {
        appends++;
        throw new WrongExpectedRevisionError(stream, -1, appends);
      },
    });
    const seen: string[][] = [];
    await expect(
      executeCommand({ events: contended, stream: STREAM, decider: recordingDecider(seen), command: { type: 'Append', secret: 'x' }, metadata: meta() }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect(appends).toBe(CONFLICT_RETRIES + 1);
    expect(reads).toBe(CONFLICT_RETRIES + 1);
    expect(seen).toHaveLength(CONFLICT_RETRIES + 1);
  });

  it('does not retry other append failures', async () => {
    let appends = 0;
    const failing = withOverrides(store, {
      append: async () => {
        appends++;
        throw new Error('disk full');
      },
    });
    await expect(
      executeCommand({ events: failing, stream: STREAM, decider: recordingDecider([]), command: { type: 'Append', secret: 'x' }, metadata: meta() }),
    ).rejects.toThrow('disk full');
    expect(appends).toBe(1);
  });

  it('a known state saves the read; a stale one conflicts and is decided again on the stream', async () => {
    await store.append(STREAM, toNewEvents([rotated('a')], meta()));
    let reads = 0;
    const counting = withOverrides(store, {
      readStream: (s, o) => {
        reads++;
        return store.readStream(s, o);
      },
    });
    const seen: string[][] = [];
    const decider = recordingDecider(seen);
    const fresh = await executeCommand({
      events: counting,
      stream: STREAM,
      decider,
      command: { type: 'Append', secret: 'b' },
      metadata: meta(),
      known: { state: ['a'], revision: 0 },
    });
    expect(reads).toBe(0);
    expect(fresh.state).toEqual(['a', 'b']);
    await executeCommand({
      events: counting,
      stream: STREAM,
      decider,
      command: { type: 'Append', secret: 'c' },
      metadata: meta(),
      known: { state: ['a'], revision: 0 },
    });
    expect(reads).toBe(1);
    expect(seen.at(-1)).toEqual(['a', 'b']);
  });

  it('passes the decider’s refusal to the caller as it is, and appends nothing', async () => {
    await expect(executeCommand({ events: store, stream: STREAM, decider: recordingDecider([]), command: { type: 'Refuse' }, metadata: meta() })).rejects.toBe(
      tooMany,
    );
    expect(await store.readStream(STREAM)).toHaveLength(0);
  });

  it('a stream read before is read again only from where it was: what anyone appended since is folded in, nothing twice', async () => {
    const decider = recordingDecider([]);
    const asked: (number | undefined)[] = [];
    const counting = withOverrides(store, {
      readStream: (stream, options) => {
        asked.push(options?.fromRevision);
        return store.readStream(stream, options);
      },
    });
    await executeCommand({ events: counting, stream: STREAM, decider, command: { type: 'Append', secret: 'a' }, metadata: meta() });
    expect(await readState(counting, STREAM, decider)).toEqual({ state: ['a'], revision: 0 });
    // Another writer (another process) appends twice: the next read starts after what was folded.
    await store.append(STREAM, toNewEvents([rotated('b'), rotated('c')], meta()));
    expect(await readState(counting, STREAM, decider)).toEqual({ state: ['a', 'b', 'c'], revision: 2 });
    expect(await readState(counting, STREAM, decider)).toEqual({ state: ['a', 'b', 'c'], revision: 2 });
    expect(asked).toEqual([undefined, undefined, 1, 3]);
    // Another store object (another process's handle) keeps its own: it reads the whole stream.
    const other = withOverrides(store, {});
    expect(await readState(other, STREAM, decider)).toEqual({ state: ['a', 'b', 'c'], revision: 2 });
  });
});
