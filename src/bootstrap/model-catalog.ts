/**
 * Every model a list of families serves, from each family's catalog
 * (src/families/<family>/catalog.ts), with the default price the embedded deployment starts
 * with, by upstream family (the channel family that speaks its protocol). A model two families
 * serve (a picgen model on the async and the synchronous route) is listed once, at the price its
 * first family gives.
 */
import type { FamilyModule } from '../families/family.js';
import { unique, type ModelEntry } from '../families/kit/prices.js';

export type { ModelEntry } from '../families/kit/prices.js';

/** The models of a list of families, each once. */
export function modelCatalogOf(list: readonly FamilyModule[]): ModelEntry[] {
  const seen = new Set<string>();
  return list.flatMap((f) => f.catalog).filter((e) => !seen.has(e.model) && seen.add(e.model));
}

/** The channel families of a catalog, each once. */
export const channelFamiliesOf = (catalog: readonly ModelEntry[]): string[] => unique(catalog.map((m) => m.family));
