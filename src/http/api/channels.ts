/** Admin channel management: `/api/channel/` (event-sourced; the upstream key is never returned). */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { NewChannelSettings } from '../../domain/channel.js';
import type { ChannelSettings } from '../../domain/events.js';
import { createChannel, deleteChannel, updateChannel } from '../../engine/channel-commands.js';
import type { ChannelDoc } from '../../../projections/channels.js';
import { requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { metadataFor } from '../request-meta.js';
import { ok } from '../api-response.js';

const ChannelFields = z.object({
  name: z.string().min(1).max(64),
  family: z.string().regex(/^[a-z0-9-]{1,32}$/, 'must be a family name such as image, vidgen, tune'),
  /** An http(s) URL, or a path such as `/_sim` meaning this gateway itself (its simulator). */
  base_url: z.union([z.url({ protocol: /^https?$/ }), z.string().regex(/^\/[\w\-./]*$/)], { message: 'must be an http(s) URL or a path on this gateway' }),
  key: z.string().max(4096),
  models: z.array(z.string().min(1).max(128)).min(1, 'must name at least one model'),
  model_mapping: z.record(z.string(), z.string().min(1)),
  groups: z.array(z.string().min(1).max(32)),
  priority: z.number().int(),
  weight: z.number().int().min(0),
  status: z.union([z.literal(1), z.literal(2)], { message: 'must be 1 (enabled) or 2 (disabled)' }),
});
const CreateChannelBody = ChannelFields.partial({ key: true, model_mapping: true, groups: true, priority: true, weight: true, status: true }).strict();
const UpdateChannelBody = ChannelFields.partial()
  .extend({ id: z.string().min(1) })
  .strict();

function toSettings(input: Partial<z.infer<typeof ChannelFields>>): Partial<ChannelSettings> {
  const s: Partial<ChannelSettings> = {};
  if (input.name !== undefined) s.name = input.name;
  if (input.family !== undefined) s.family = input.family;
  if (input.base_url !== undefined) s.baseUrl = input.base_url;
  if (input.key !== undefined) s.key = input.key;
  if (input.models !== undefined) s.models = input.models;
  if (input.model_mapping !== undefined) s.modelMapping = input.model_mapping;
  if (input.groups !== undefined) s.groups = input.groups;
  if (input.priority !== undefined) s.priority = input.priority;
  if (input.weight !== undefined) s.weight = input.weight;
  if (input.status !== undefined) s.status = input.status;
  return s;
}

/** What the API shows of a channel: everything but the key, which is only said to be set. */
export function channelRecord(c: ChannelDoc) {
  return {
    id: c.channelId,
    name: c.name,
    family: c.family,
    base_url: c.baseUrl,
    key_set: c.key.length > 0,
    models: c.models,
    model_mapping: c.modelMapping,
    groups: c.groups,
    priority: c.priority,
    weight: c.weight,
    status: c.status,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

export function channelRoutes(deps: GatewayDeps): FastifyPluginAsync {
  return async (plain) => {
    const app = plain.withTypeProvider<ZodTypeProvider>();
    app.addHook('preHandler', requireSession(deps, 'admin'));

    async function respondWith(id: string, position: bigint) {
      await deps.runner.waitFor(position);
      await deps.catalog.refresh();
      const doc = await deps.views.get<ChannelDoc>('channels', id);
      return ok(doc ? channelRecord(doc.doc) : null);
    }

    app.get('/api/channel/', { schema: { tags: ['admin'] } }, async () => ok(deps.catalog.channels().map(channelRecord)));

    app.post('/api/channel/', { schema: { tags: ['admin'], body: CreateChannelBody } }, async (request) => {
      // The body's schema requires name, family, base_url and models; the rest has defaults.
      const settings = toSettings(request.body) as NewChannelSettings;
      const { channelId, position } = await createChannel(deps.events, settings, metadataFor(request, deps.clock()));
      return respondWith(channelId, position);
    });

    app.put('/api/channel/', { schema: { tags: ['admin'], body: UpdateChannelBody } }, async (request) => {
      const { id, ...fields } = request.body;
      return respondWith(id, await updateChannel(deps.events, id, toSettings(fields), metadataFor(request, deps.clock())));
    });

    app.delete('/api/channel/:id', { schema: { tags: ['admin'], params: z.object({ id: z.string().min(1) }) } }, async (request) => {
      const { id } = request.params;
      await respondWith(id, await deleteChannel(deps.events, id, metadataFor(request, deps.clock())));
      return ok(null, 'channel deleted');
    });
  };
}
