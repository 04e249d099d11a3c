import { VID_H3_FAMILY, vidH3VideoProjection } from './view.js';
import { viewBody } from '../kit/query-body.js';
import type { FamilyModule } from '../family.js';
import { vidH3Catalog } from './catalog.js';
import { vidH3Routes } from './routes.js';
import { vidH3Upstream } from './upstream.js';

export const vidH3Family: FamilyModule = {
  routes: [vidH3Routes],
  projections: [vidH3VideoProjection],
  upstreams: [vidH3Upstream],
  catalog: vidH3Catalog,
  callbackBodies: viewBody(VID_H3_FAMILY, vidH3VideoProjection),
};
