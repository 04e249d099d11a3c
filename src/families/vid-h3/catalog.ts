/** The Vid-H3 model (spec 4.13) and its default prices per second. */
import { type ModelEntry, perSecond } from '../kit/prices.js';

export const vidH3Catalog: readonly ModelEntry[] = [{ model: 'Vid-H3', family: 'vid-h3', price: perSecond({ '768P': 5_000, '2K': 12_000 }) }];
