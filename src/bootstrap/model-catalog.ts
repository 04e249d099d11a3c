/**
 * Every model the spec names, from each family's catalog (src/families/<family>/catalog.ts), with
 * the default price the embedded deployment starts with, by upstream family (the channel family
 * that speaks its protocol). A model two families serve (a picgen model on the async and the
 * synchronous route) is listed once, at the price its first family gives.
 */
import { families } from '../families/index.js';
import { unique, type ModelEntry } from '../families/kit/prices.js';

export type { ModelEntry } from '../families/kit/prices.js';

function oncePerModel(entries: readonly ModelEntry[]): ModelEntry[] {
  const seen = new Set<string>();
  return entries.filter((e) => !seen.has(e.model) && seen.add(e.model));
}

export const modelCatalog: readonly ModelEntry[] = oncePerModel(families.flatMap((f) => f.catalog));

export const channelFamilies = unique(modelCatalog.map((m) => m.family));
