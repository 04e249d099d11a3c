/**
 * A process's own handles on the shared stores: every call passes the process's gate
 * (node.ts), and the event store's calls may fail the way a networked store fails — an append
 * refused before it was written, an append written whose answer is lost, a read that does not
 * answer. The stores themselves are the real embedded adapters on `:memory:`.
 */
import type { AssetStore } from '../src/ports/asset-store.js';
import type { AppendOptions, EventStore, NewEvent, Subscription } from '../src/ports/event-store.js';
import { commitEachInTurn, type ViewStore } from '../src/ports/view-store.js';
import type { FaultCounts, FaultRates } from './faults.js';
import type { SimNode } from './node.js';
import type { Random } from './random.js';

/** What a store that failed to answer throws (a connection error, not a refusal). */
export class SimulatedStoreError extends Error {
  constructor(what: string) {
    super(`simulated: ${what}`);
    this.name = 'SimulatedStoreError';
  }
}

export interface FaultDeps {
  node: SimNode;
  random: () => Random;
  rates: FaultRates;
  faults: FaultCounts;
  /** False while the world is being set up or drained: no store faults then. */
  faulty: () => boolean;
  /** Told of every append that reached the store, with the process that made it (the trace names it). */
  appended?: (stream: string, events: readonly NewEvent[], node: SimNode) => void;
}

export function nodeEventStore(store: EventStore, d: FaultDeps): EventStore {
  const { node } = d;
  const maybe = (kind: 'appendFailsBeforeCommit' | 'appendAmbiguous' | 'readFails'): boolean => {
    if (!d.faulty() || !d.random().chance(d.rates[kind])) return false;
    d.faults.add(kind);
    return true;
  };
  const read = <T>(fn: () => Promise<T>): Promise<T> =>
    node.call(async () => {
      if (maybe('readFails')) throw new SimulatedStoreError('the store did not answer a read');
      return fn();
    });
  return {
    append: (stream: string, events: readonly NewEvent[], options?: AppendOptions) =>
      node.call(async () => {
        if (maybe('appendFailsBeforeCommit')) {
          // Like a real lost request: a dependent append (options.after) is not written either.
          throw new SimulatedStoreError(`the append to ${stream} failed before it was written`);
        }
        const result = await store.append(stream, events, options);
        d.appended?.(stream, events, node);
        if (maybe('appendAmbiguous')) throw new SimulatedStoreError(`the append to ${stream} was written but its answer was lost`);
        return result;
      }),
    readStream: (stream, options) => read(() => store.readStream(stream, options)),
    readAll: (options) => read(() => store.readAll(options)),
    readStreamsWithPrefix: (prefix, options) => node.iterable(store.readStreamsWithPrefix(prefix, options)),
    headPosition: () => read(() => store.headPosition()),
    subscribe(options): Subscription {
      const subscription = store.subscribe(options);
      const gated = node.iterable(subscription);
      return { [Symbol.asyncIterator]: () => gated[Symbol.asyncIterator](), close: () => subscription.close() };
    },
    ping: () => node.call(() => store.ping()),
    // The store is shared: a process closing its handle closes nothing of it.
    close: async () => undefined,
  };
}

/** Every method of `target` called through the process's gate (views, assets). */
export function gated<T extends object>(target: T, node: SimNode, keepOpen = true): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (keepOpen && prop === 'close') return async () => undefined;
      return (...args: unknown[]) => node.call(() => Promise.resolve((value as (...a: unknown[]) => unknown).apply(obj, args)));
    },
  });
}

/**
 * A process's view store. Its `commitAll` commits each projection in turn, each through the gate,
 * as the MongoDB adapter does (no transaction across collections): one view can be ahead of
 * another while other processes read them, and after the projector is killed between two, until
 * a projector folds the one behind on from its own checkpoint. The one SQLite transaction of the
 * embedded default would hide that from every world.
 */
export function nodeViewStore(views: ViewStore, node: SimNode): ViewStore {
  const viaGate = gated(views, node);
  const commit: ViewStore['commit'] = (projection, writes, checkpoint) => viaGate.commit(projection, writes, checkpoint);
  const commitAll: ViewStore['commitAll'] = (batch, checkpoint) => commitEachInTurn(commit, batch, checkpoint);
  return new Proxy(viaGate, { get: (obj, prop, receiver) => (prop === 'commitAll' ? commitAll : (Reflect.get(obj, prop, receiver) as unknown)) });
}
export const nodeAssetStore = (assets: AssetStore, node: SimNode): AssetStore => gated(assets, node);
