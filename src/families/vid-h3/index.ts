import type { Projection } from '../../../projections/projection.js';
import { vidH3VideoProjection } from '../../../projections/vid-h3-video.js';
import type { FamilyModule } from '../family.js';
import { vidH3Routes } from './routes.js';
import { vidH3Upstream } from './upstream.js';

export const vidH3Family: FamilyModule = {
  name: 'vid-h3',
  routes: [vidH3Routes],
  projections: [vidH3VideoProjection as Projection],
  upstreams: [vidH3Upstream],
};
