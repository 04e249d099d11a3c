/**
 * Admin channel management: `/api/channel/` (event-sourced; the upstream key is never returned).
 * A key is encrypted before it is appended: events and views hold only ciphertext.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { NewChannelSettings } from '../../domain/channel.js';
import type { ChannelSettings } from '../../domain/events.js';
import { createChannel, deleteChannel, updateChannel } from '../../engine/commands/channel-commands.js';
import type { ChannelKeyCipher } from '../../engine/channels/channel-key-cipher.js';
import type { ChannelHealthSnapshot } from '../../engine/channels/channel-health.js';
import type { ChannelDoc } from '../../../projections/channels.js';
import { requireSession } from '../auth/session.js';
import type { GatewayDeps } from '../deps.js';
import { metadataFor } from '../request-meta.js';
import { API_ROUTE, camelFields, envelope, ok } from '../api-response.js';
import { VIEWS } from '../../../projections/views.js';

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

function toSettings(input: Partial<z.infer<typeof ChannelFields>>, keys: Pick<ChannelKeyCipher, 'encrypt'>): Partial<ChannelSettings> {
  return camelFields({ ...input, ...(input.key === undefined ? {} : { key: keys.encrypt(input.key) }) });
}

/** A channel's circuit breaker and health check, as this gateway process sees them. */
const ChannelHealthRecord = z.object({
  state: z.enum(['closed', 'open', 'half_open']),
  consecutive_failures: z.number().int().min(0),
  last_failure_at: z.string().nullable(),
  last_error: z.string().nullable(),
  last_check_at: z.string().nullable(),
});

const ChannelListItem = z.object({
  id: z.string(),
  name: z.string(),
  family: z.string(),
  base_url: z.string(),
  key_set: z.boolean(),
  models: z.array(z.string()),
  model_mapping: z.record(z.string(), z.string()),
  groups: z.array(z.string()),
  priority: z.number().int(),
  weight: z.number().int(),
  status: z.union([z.literal(1), z.literal(2)]),
  created_at: z.string(),
  updated_at: z.string(),
  health: ChannelHealthRecord,
});

/** A channel never judged here (no try, no check yet) is closed with nothing to report. */
function healthRecord(snapshot: ChannelHealthSnapshot | undefined): z.infer<typeof ChannelHealthRecord> {
  return {
    state: snapshot?.state ?? 'closed',
    consecutive_failures: snapshot?.consecutiveFailures ?? 0,
    last_failure_at: snapshot?.lastFailureAt?.toISOString() ?? null,
    last_error: snapshot?.lastError ?? null,
    last_check_at: snapshot?.lastCheckAt?.toISOString() ?? null,
  };
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

export function channelRoutes(deps: GatewayDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireSession(deps, 'admin'));

    async function respondWith(id: string, position: bigint) {
      await deps.runner.waitFor(position);
      await deps.catalog.refresh();
      const doc = await deps.views.get<ChannelDoc>(VIEWS.channels, id);
      return ok(doc ? channelRecord(doc.doc) : null);
    }

    app.get('/api/channel/', { config: API_ROUTE, schema: { tags: ['admin'], response: { 200: envelope(z.array(ChannelListItem)) } } }, async () =>
      ok([
        ...deps.catalog.channels().map((c) => ({ ...channelRecord(c), health: healthRecord(deps.channelHealth?.of(c.channelId)) })),
        // A channel whose key this process cannot decrypt is never used: shown open, the reason as
        // its last error, so the administrator sees why it serves nothing.
        ...deps.catalog.unreadable().map((u) => ({
          ...channelRecord(u.channel),
          health: { ...healthRecord(deps.channelHealth?.of(u.channel.channelId)), state: 'open' as const, last_error: `key: ${u.reason}` },
        })),
      ]),
    );

    app.post('/api/channel/', { config: API_ROUTE, schema: { tags: ['admin'], body: CreateChannelBody } }, async (request) => {
      // The body's schema requires name, family, base_url and models; the rest has defaults.
      const settings = toSettings(request.body, deps.channelKeys) as NewChannelSettings;
      const { channelId, position } = await createChannel(deps.events, settings, metadataFor(request, deps.clock()));
      return respondWith(channelId, position);
    });

    app.put('/api/channel/', { config: API_ROUTE, schema: { tags: ['admin'], body: UpdateChannelBody } }, async (request) => {
      const { id, ...fields } = request.body;
      return respondWith(id, await updateChannel(deps.events, id, toSettings(fields, deps.channelKeys), metadataFor(request, deps.clock())));
    });

    app.delete('/api/channel/:id', { config: API_ROUTE, schema: { tags: ['admin'], params: z.object({ id: z.string().min(1) }) } }, async (request) => {
      const { id } = request.params;
      await respondWith(id, await deleteChannel(deps.events, id, metadataFor(request, deps.clock())));
      return ok(null, 'channel deleted');
    });
  };
}
