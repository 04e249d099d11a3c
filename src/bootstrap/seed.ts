/**
 * Seeds an empty store: the first administrator, then channels and prices from a bootstrap
 * file (docs/bootstrap.md) or, on the embedded default, one simulator channel per family.
 * Safe to run on every start and on several instances at once: every append expects the
 * stream not to exist, so a second run changes nothing.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ChannelSettings, ModelPrice, streams } from '../domain/events.js';
import { randomBase62 } from '../domain/ids.js';
import { WrongExpectedRevisionError, type EventMetadata } from '../ports/event-store.js';
import { appendEvents } from '../engine/commands/append.js';
import { registerUser } from '../engine/accounts/users.js';
import { isRefusal } from '../domain/refusal.js';
import { hashPassword } from '../http/auth/password.js';
import type { GatewayDeps } from '../http/deps.js';
import { channelFamiliesOf, type ModelEntry } from './model-catalog.js';
import { VIEWS } from '../../projections/views.js';

export const BootstrapFile = z.object({
  channels: z
    .array(
      ChannelSettings.partial({ key: true, modelMapping: true, groups: true, priority: true, weight: true, status: true }).extend({
        id: z.string().regex(/^[\w-]{1,64}$/),
      }),
    )
    .default([]),
  prices: z.record(z.string(), ModelPrice).default({}),
  groupRatios: z.record(z.string(), z.number().int().min(0)).default({ default: 1000 }),
});
export type BootstrapFile = z.infer<typeof BootstrapFile>;

/** The embedded default: every model of the gateway's families (`modelCatalogOf`) on the built-in simulator. */
export function simulatorSeed(simulatorBaseUrl: string, catalog: readonly ModelEntry[]): BootstrapFile {
  return {
    channels: channelFamiliesOf(catalog).map((family) => ({
      id: `sim-${family}`,
      name: `simulator (${family})`,
      family,
      baseUrl: simulatorBaseUrl,
      key: 'simulator',
      models: catalog.filter((m) => m.family === family).map((m) => m.model),
    })),
    prices: Object.fromEntries(catalog.map((m) => [m.model, m.price])),
    groupRatios: { default: 1000 },
  };
}

/**
 * How long seeding waits for the views to show what it wrote. An `api` instance follows a
 * projector in another process, which may start later (every role at once on a first `docker
 * compose up`): the request paths' 10 s bound would fail the start; the projector's own start
 * waits as long for its views (gateway.ts).
 */
const SEED_VIEWS_WAIT_MS = 120_000;

async function ignoreExisting(append: Promise<unknown>): Promise<void> {
  try {
    await append;
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
  }
}

export async function seedChannelsAndPrices(deps: GatewayDeps, seed: BootstrapFile, metadata: EventMetadata): Promise<void> {
  let last = 0n;
  for (const { id, ...c } of seed.channels) {
    // The bootstrap file's key is clear text; the event gets its ciphertext (as the admin API's).
    const data = { modelMapping: {}, groups: [], priority: 0, weight: 1, status: 1 as const, ...c, key: deps.channelKeys.encrypt(c.key ?? ''), channelId: id };
    await ignoreExisting(
      appendEvents(deps.events, streams.channel(id), [{ type: 'ChannelCreated', data }], { expectedRevision: 'no_stream', metadata }).then(
        (r) => (last = r.position),
      ),
    );
  }
  await ignoreExisting(
    appendEvents(deps.events, streams.pricing(), [{ type: 'PricesSet', data: { models: seed.prices, groupRatios: seed.groupRatios } }], {
      expectedRevision: 'no_stream',
      metadata,
    }).then((r) => (last = r.position > last ? r.position : last)),
  );
  if (last > 0n) await deps.runner.waitFor(last, SEED_VIEWS_WAIT_MS);
  await deps.catalog.refresh();
}

export async function loadBootstrapFile(path: string): Promise<BootstrapFile> {
  const parsed = BootstrapFile.safeParse(JSON.parse(await readFile(path, 'utf8')));
  if (!parsed.success) throw new Error(`bootstrap file ${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/**
 * Creates the administrator when no user exists. Returns the generated password when one was
 * made up, so the caller can print it once; it is never logged.
 */
export async function seedAdmin(deps: GatewayDeps, metadata: EventMetadata): Promise<string | undefined> {
  if ((await deps.views.count(VIEWS.users, {})) > 0) return undefined;
  const generated = deps.config.adminPassword ? undefined : randomBase62(20);
  const password = deps.config.adminPassword ?? generated!;
  try {
    const user = await registerUser(
      deps,
      { username: deps.config.adminUsername, passwordHash: await hashPassword(password), role: 'admin', group: 'default' },
      metadata,
    );
    await deps.runner.waitFor(user.position, SEED_VIEWS_WAIT_MS);
  } catch (err) {
    if (isRefusal(err, 'username_taken')) return undefined;
    throw err;
  }
  return generated;
}
