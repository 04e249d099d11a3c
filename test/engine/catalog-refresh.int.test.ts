/**
 * The channel catalog re-reads the channels when their projection commits. A view store that
 * does not answer that read (a database restarting) must neither end the process (an unhandled
 * rejection does, in Node) nor leave the catalog stale until the next change: the read is tried
 * again until it succeeds. Real SQLite stores and the real projection runner; the view store's
 * reads fail while `down` is set.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/engine/channels/catalog.js';
import { createChannel } from '../../src/engine/commands/channel-commands.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import { StoreUnavailableError } from '../../src/ports/store-unavailable.js';
import { channelsProjection } from '../../projections/channels.js';
import { pricingProjection } from '../../projections/pricing.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { eventually } from '../support/gateway.js';
import { useTempStores } from '../support/temp-event-store.js';

let events: EventStore;
let views: ViewStore;
useTempStores((stores) => ({ events, views } = stores));

describe('the channel catalog after a change', () => {
  it('reads the channels again until the store answers, and no rejection is left unhandled', async () => {
    let down = false;
    let failedReads = 0;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    // The catalog's reads go through this; the runner writes to the store itself.
    const flaky: ViewStore = new Proxy(views, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if ((prop !== 'find' && prop !== 'get') || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!down) return (value as (...a: unknown[]) => unknown).apply(target, args);
          failedReads++;
          return Promise.reject(new StoreUnavailableError('the view store', new Error('restarting')));
        };
      },
    });
    const errors: string[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void errors.push((JSON.parse(line) as { msg: string }).msg) });
    const runner = createProjectionRunner({ events, views, projections: [channelsProjection, pricingProjection], log: pino({ level: 'silent' }) });
    await runner.start();
    const catalog = await createCatalog(flaky, runner, undefined, { log });
    try {
      expect(catalog.channels()).toEqual([]);
      down = true;
      const meta = { at: new Date().toISOString(), correlationId: 'test' };
      const { channelId } = await createChannel(events, { name: 'c', family: 'images', baseUrl: 'http://upstream.invalid', key: 'sk', models: ['m'] }, meta);
      // The commit set off a read that failed, and it is being tried again.
      await eventually(async () => (failedReads >= 2 ? true : undefined), 10_000);
      expect(catalog.channel(channelId)).toBeUndefined();
      down = false;
      await eventually(async () => catalog.channel(channelId), 10_000);
      expect(errors.some((m) => m.includes('trying again'))).toBe(true);
      // Let any rejection left behind be reported before looking.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      catalog.close();
      await runner.stop();
    }
  });
});
