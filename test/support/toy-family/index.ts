/**
 * Step 7 of docs/adding-a-family.md, `index.ts`: the toy family's `FamilyModule`
 * (src/families/family.ts). A built-in family is then one line in src/families/index.ts; this
 * one is added by the test through `GatewayOptions.extraFamilies`, which composes it the same way.
 */
import type { FamilyModule } from '../../../src/families/family.js';
import { viewBody } from '../../../src/families/kit/query-body.js';
import { toyCatalog } from './catalog.js';
import { toyRoutes } from './routes.js';
import { toyUpstream } from './upstream.js';
import { TOY_FAMILY, toyTaskProjection } from './view.js';

export const toyFamily: FamilyModule = {
  routes: [toyRoutes],
  projections: [toyTaskProjection],
  upstreams: [toyUpstream],
  catalog: toyCatalog,
  callbackBodies: viewBody(TOY_FAMILY, toyTaskProjection),
};
