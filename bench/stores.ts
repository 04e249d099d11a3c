/**
 * `--store sqlite|postgres`: the stores a gateway scenario runs on. `sqlite` (the default) is the
 * embedded default; `postgres` puts the events and the views on POSTGRES_URL (e.g.
 * `eval "$(bash scripts/postgres-local.sh env)"`), in a schema of the run's own, dropped after it.
 */
import { randomBytes } from 'node:crypto';
import { freshSchema } from '../test/support/postgres.js';

export type StoreChoice = 'sqlite' | 'postgres';
export const STORE_CHOICES: readonly StoreChoice[] = ['sqlite', 'postgres'];

export function storeOf(args: readonly string[]): StoreChoice {
  const index = args.indexOf('--store');
  if (index < 0) return 'sqlite';
  const store = STORE_CHOICES.find((s) => s === args[index + 1]);
  if (!store) throw new Error(`--store takes ${STORE_CHOICES.join(' or ')}, not ${args[index + 1] ?? 'nothing'}`);
  return store;
}

export interface ScenarioStores {
  /** Added to the gateway's environment. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export function scenarioStores(store: StoreChoice): ScenarioStores {
  if (store === 'sqlite') return { env: {}, drop: async () => undefined };
  const url = process.env.POSTGRES_URL?.trim();
  if (!url) throw new Error('--store postgres needs POSTGRES_URL (bash scripts/postgres-local.sh start)');
  const schema = freshSchema(url, 'bench');
  return {
    // One process, as the gateway chooses on PostgreSQL anyway: said, so the figures name it `all`.
    env: { POSTGRES_URL: url, POSTGRES_SCHEMA: schema.schema, CHANNEL_KEYS_SECRET: randomBytes(32).toString('base64'), PROCESSES: '1' },
    drop: () => schema.drop(),
  };
}
