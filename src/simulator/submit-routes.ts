/**
 * The submit log over HTTP: hooks that log every POST a family answers, and
 * `GET {prefix}/_submits`, which shows the log (hidden from the gateway's OpenAPI with every
 * other simulator route). Tests read it to count how often a gateway task reached the upstream,
 * including from another process (`main.ts`) that outlives the gateway's kills.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SimContext } from './context.js';
import type { SubmitLog, SubmitRecord } from './submit-log.js';

export const SUBMIT_LOG_PATH = '/_submits';

/** Logs each POST of `scope` (one family's routes) from its arrival to its answer. */
export function logSubmits(scope: FastifyInstance, family: string, log: SubmitLog, ctx: SimContext): void {
  const records = new WeakMap<FastifyRequest, SubmitRecord>();
  scope.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'POST') return;
    const key = request.headers['idempotency-key'];
    const url = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
    const record = log.begin({
      family,
      path: url.startsWith(ctx.prefix) ? url.slice(ctx.prefix.length) : url,
      at: ctx.now(),
      ...(typeof key === 'string' && key.length > 0 ? { idempotencyKey: key } : {}),
    });
    records.set(request, record);
    // 'finish' also fires for answers written past fastify (streamed, hijacked replies).
    reply.raw.once('finish', () => log.finished(record, request, reply.raw.statusCode));
  });
  scope.addHook('onSend', async (request, _reply, payload) => {
    const record = records.get(request);
    if (record && (typeof payload === 'string' || Buffer.isBuffer(payload))) log.answered(record, payload.toString());
    return payload;
  });
}

/** `?after=<seq>`: only the submits after that one (a test that polls the log reads what is new). */
export function submitLogRoute(app: FastifyInstance, log: SubmitLog): void {
  app.get<{ Querystring: { after?: string } }>(SUBMIT_LOG_PATH, async (request) => {
    const after = Number(request.query.after ?? 0);
    const snapshot = log.snapshot();
    return Number.isFinite(after) && after > 0 ? { ...snapshot, submits: snapshot.submits.filter((s) => s.seq > after) } : snapshot;
  });
}
