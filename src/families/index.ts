/** Every generation family's contribution: routes, query views and upstream adapters. */
import type { UpstreamAdapter } from '../engine/upstream.js';
import type { RoutePlugin } from '../http/server.js';
import type { Projection } from '../../projections/projection.js';
import { imageTaskProjection } from '../../projections/image-task.js';
import { asyncImageRoutes } from './images/async-routes.js';
import { asyncImagesUpstream } from './images/upstream.js';

export const familyRoutes: readonly RoutePlugin[] = [asyncImageRoutes];
export const familyProjections: readonly Projection[] = [imageTaskProjection] as Projection[];
export const upstreamAdapters: readonly UpstreamAdapter[] = [asyncImagesUpstream];
