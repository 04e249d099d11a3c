import type { PriceTable } from '../src/domain/events.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export const PRICING_DOC_ID = 'current';

/** The price table in force: each PricesSet carries the whole table. */
export const pricingProjection: Projection<PriceTable> = {
  name: 'pricing',
  view: VIEWS.pricing,
  handles: ['PricesSet'],
  documentId: () => PRICING_DOC_ID,
  evolve: (_doc, e) => (e.type === 'PricesSet' ? e.data : undefined),
};
