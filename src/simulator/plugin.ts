/**
 * The built-in upstream simulator as one fastify plugin. The gateway mounts it at `/_sim`
 * (`app.register(simulatorPlugin, { prefix: '/_sim' })`); `main.ts` runs it alone. Its answers
 * depend on no state: every task lives in its signed id (task-id.ts), so a restarted process, or
 * another instance with the same secret, answers the same ids the same way. What it was asked is
 * logged in memory for tests (submit-log.ts, `GET {prefix}/_submits`).
 *
 * Each simulated family is a module of families/ (one per family folder), listed in families/index.ts.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { SimContext, SimFamily } from './context.js';
import { simulatorFamilies } from './families/index.js';
import { PICGEN_EDITS_PATH } from './families/picgen.js';
import { MAX_FILES } from '../families/picgen/multipart.js';
import { MAX_REFERENCE_BYTES } from '../families/picgen/schema.js';
import { fileRoutes } from './files.js';
import { notFound, plainErrorBody, useSimErrorShape } from './http.js';
import { createSubmitLog } from './submit-log.js';
import { logSubmits, submitLogRoute } from './submit-routes.js';
import { createTaskIdCodec, DEFAULT_SIM_SECRET } from './task-id.js';
import { resolveStepMs } from './timeline.js';

export type SimulatorOptions = {
  /** Timeline step in ms; default `SIM_STEP_MS`, else 150; 0 finishes tasks at once. */
  stepMs?: number;
  /** HMAC key of the task ids; default `SIM_SECRET`, else a built-in constant. */
  secret?: string;
  /** Clock (epoch ms); tests drive it. Default `Date.now`. */
  now?: () => number;
  /** How long result files stay reachable after a task finished; default 2 hours. */
  assetRetentionMs?: number;
  /** Simulated families after the built-in ones (families/index.ts); a gateway's `extraSimulatorFamilies`. */
  extraFamilies?: readonly SimFamily[];
};

export const DEFAULT_ASSET_RETENTION_MS = 2 * 60 * 60 * 1000;

/**
 * Request bodies the simulator accepts: the gateway's own bound (the server's 40 MiB, which the
 * simulator's routes inherit), except on the one path whose requests grow past what a client may
 * send. A picgen edit may come as a form of up to 14 files of 30 MiB (the gateway's form limits);
 * the gateway sends them on as data URIs in a JSON body, 4/3 larger in Base64: 560 MiB, plus the
 * JSON bound for the rest. docs/decisions/0140-simulator-off-by-default-and-limited.md
 */
export const PICGEN_EDITS_BODY_LIMIT = MAX_FILES * 4 * Math.ceil(MAX_REFERENCE_BYTES / 3) + 40 * 1024 * 1024;

export const simulatorPlugin: FastifyPluginAsync<SimulatorOptions> = async (app, options) => {
  const secret = options.secret ?? (process.env.SIM_SECRET || DEFAULT_SIM_SECRET);
  const families = [...simulatorFamilies, ...(options.extraFamilies ?? [])];
  const submits = createSubmitLog();
  const ctx: SimContext = {
    stepMs: resolveStepMs(options.stepMs),
    codec: submits.recording(createTaskIdCodec(secret)),
    now: options.now ?? Date.now,
    assetRetentionMs: options.assetRetentionMs ?? DEFAULT_ASSET_RETENTION_MS,
    prefix: app.prefix,
    imageGenerators: families.flatMap((f) => (f.imageGenerator ? [f.imageGenerator] : [])),
  };

  app.addHook('onRoute', (route) => {
    if (route.url.endsWith(PICGEN_EDITS_PATH)) route.bodyLimit ??= PICGEN_EDITS_BODY_LIMIT;
  });
  useSimErrorShape(app, plainErrorBody);
  app.setNotFoundHandler((request) => {
    throw notFound('not_found', `the simulator has no route ${request.method} ${request.url.split('?')[0]}`);
  });

  for (const family of families) {
    await app.register(async (scope) => {
      logSubmits(scope, family.name, submits, ctx);
      await family.routes(scope, ctx);
    });
  }
  submitLogRoute(app, submits);
  await app.register(async (scope) => fileRoutes(scope, ctx, families));
};
