/**
 * What every simulated family shares: the settings of one simulator mount, and the shape a
 * family module has so `plugin.ts` can register it from a list.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TaskIdCodec } from './task-id.js';

export type SimContext = Readonly<{
  /** Length of one timeline step in ms (0 = tasks finish at once). Stored in each task id. */
  stepMs: number;
  codec: TaskIdCodec;
  /** Clock, epoch ms. */
  now: () => number;
  /** How long result files stay reachable after a task finished (spec: about 2 hours). */
  assetRetentionMs: number;
  /** The simulator's mount prefix, e.g. `/_sim` (empty at the root). */
  prefix: string;
  /** Families' models on the shared `POST /v1/images/generations`, besides its own family's. */
  imageGenerators: readonly SimImageGenerator[];
}>;

/** A family's share of the simulator's `POST /v1/images/generations` (the gateway's path is shared too). */
export type SimImageGenerator = Readonly<{
  handles: (body: unknown) => boolean;
  generate: (request: FastifyRequest, ctx: SimContext) => Promise<unknown>;
}>;

export type SimFile = Readonly<{ contentType: string; body: Buffer }>;

export type SimFamily = Readonly<{
  name: string;
  /**
   * Registers the family's upstream routes. Called inside its own encapsulated context under the
   * simulator prefix, so a family may set its own error shape there (see `useSimErrorShape`).
   */
  routes: (app: FastifyInstance, ctx: SimContext) => void | Promise<void>;
  /**
   * Serves `GET {prefix}/files/<id>/<name>` for ids this family minted: the bytes when the file
   * exists now, undefined otherwise (foreign id, task not finished, index out of range, expired).
   */
  file?: (id: string, name: string, ctx: SimContext) => SimFile | undefined;
  /** Its models on the shared `POST /v1/images/generations`. */
  imageGenerator?: SimImageGenerator;
}>;
