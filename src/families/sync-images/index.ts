import { syncResultProjection } from '../../../projections/sync-result.js';
import type { FamilyModule } from '../family.js';
import { syncImagesCatalog } from './catalog.js';
import { IMAGE_GENERATIONS_PATH } from '../kit/shared-paths.js';
import { chatBody, imagesBody, SYNC_IMAGE_FAMILY } from './answers.js';
import { chatRoutes } from './chat-route.js';
import { ChatAnswer, ImagesAnswer } from './schema.js';
import { stdImageGenerator } from './images-route.js';
import { CHAT_PATH } from './upstream.js';

/**
 * Synchronous std-image / pro-image (spec 4.5, 4.6): the chat-style route here, the images-style
 * one on the shared `/v1/images/generations`. Sync calls run in the request (runSyncTask), so
 * there is no poll adapter. The `sync-results` view holds how every synchronous call ended
 * (picgen's too), which the result routes answer by id (`GET <path>/{id}`).
 */
export const syncImagesFamily: FamilyModule = {
  routes: [chatRoutes],
  projections: [syncResultProjection],
  upstreams: [],
  catalog: syncImagesCatalog,
  imageGenerators: [stdImageGenerator],
  syncResults: [
    {
      path: IMAGE_GENERATIONS_PATH,
      summary: 'The result of a synchronous image generation, by the id in its x-task-id header',
      made: (d) => d.family === SYNC_IMAGE_FAMILY && d.action === 'images/generate',
      body: imagesBody,
      answer: ImagesAnswer,
    },
    {
      path: CHAT_PATH,
      summary: 'The result of a synchronous chat-style image call, by its id',
      made: (d) => d.family === SYNC_IMAGE_FAMILY && d.action.startsWith('chat/'),
      body: (_deps, call) => chatBody(call),
      answer: ChatAnswer,
    },
  ],
};
