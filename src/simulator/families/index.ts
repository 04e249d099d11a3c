/**
 * Every simulated family: each family's upstream as the simulator plays it, one module per
 * family folder (src/families/<family>/). A layer beside the families: a simulated family may
 * read its family's upstream protocol (paths, sizes), no family imports the simulator.
 */
import type { SimFamily } from '../context.js';
import { artSimFamily } from './art.js';
import { clipSimFamily } from './clip.js';
import { asyncImagesSimFamily } from './images.js';
import { motionSimFamily } from './motion.js';
import { picgenSyncSimFamily } from './picgen.js';
import { syncImagesSimFamily } from './sync-images.js';
import { tuneSimFamily } from './tune.js';
import { vidH3SimFamily } from './vid-h3.js';
import { vidgenSimFamily } from './vidgen.js';

export const simulatorFamilies: readonly SimFamily[] = [
  asyncImagesSimFamily,
  vidgenSimFamily,
  tuneSimFamily,
  artSimFamily,
  vidH3SimFamily,
  syncImagesSimFamily,
  picgenSyncSimFamily,
  clipSimFamily,
  motionSimFamily,
];
