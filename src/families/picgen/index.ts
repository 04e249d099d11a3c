import type { FamilyModule } from '../family.js';
import { picgenCatalog, picgenSyncModels } from './catalog.js';
import { IMAGE_GENERATIONS_PATH } from '../kit/shared-paths.js';
import { picgenBody } from './answer.js';
import { PICGEN_SYNC_FAMILY, picgenEditRoutes, picgenGeneration } from './routes.js';
import { GenerationBody, PicgenAnswer } from './schema.js';
import { PICGEN_EDITS_PATH } from './upstream.js';

/**
 * Synchronous picgen (spec 4.7, 4.8): `/v1/images/edits` here; generations on the shared
 * `/v1/images/generations` path, dispatched on the model (kit/shared-paths.ts).
 */
export const picgenSyncFamily: FamilyModule = {
  routes: [picgenEditRoutes],
  projections: [],
  upstreams: [],
  catalog: picgenCatalog,
  imageGenerators: [{ label: 'picgen', models: picgenSyncModels, body: GenerationBody, answer: PicgenAnswer, generate: picgenGeneration }],
  syncResults: [
    {
      path: IMAGE_GENERATIONS_PATH,
      summary: 'The result of a synchronous image generation, by the id in its x-task-id header',
      made: (d) => d.family === PICGEN_SYNC_FAMILY && d.action === 'generate',
      body: picgenBody,
      answer: PicgenAnswer,
    },
    {
      path: PICGEN_EDITS_PATH,
      summary: 'The result of a synchronous picgen edit, by the id in its x-task-id header',
      made: (d) => d.family === PICGEN_SYNC_FAMILY && (d.action === 'edit' || d.action === 'layers'),
      body: picgenBody,
      answer: PicgenAnswer,
    },
  ],
};
