/**
 * The versioned envelope of events leaving the gateway (bus topics, server-sent events); see
 * docs/events.md. Consumers dedupe by `id` and order by `position` within a key.
 */
import type { RecordedDomainEvent } from '../../domain/recorded.js';

export const TASK_TOPIC = 'gateway.task-events.v1';
export const BILLING_TOPIC = 'gateway.billing-events.v1';
/** Administration of users: never published on the bus, shown to administrators' event streams only. */
export const USER_ADMIN_TOPIC = 'gateway.user-admin-events.v1';

export interface EventEnvelope {
  specversion: 'gateway.events.v1';
  id: string;
  type: string;
  topic: typeof TASK_TOPIC | typeof BILLING_TOPIC | typeof USER_ADMIN_TOPIC;
  /** Task id (task topic), account id (billing topic) or user id (user administration): the partition key. */
  key: string;
  stream: string;
  revision: number;
  /** Global position (decimal string): increases with every event. */
  position: string;
  time: string;
  accountId: string | null;
  correlationId: string | null;
  causationId: string | null;
  /** The event's data, or `null` when it was larger than `MAX_ENVELOPE_DATA_BYTES` (`truncated`). */
  data: unknown;
  /** Present when `data` was left out for its size: read the event from the store by `stream`/`revision`. */
  truncated?: { bytes: number };
}

/**
 * The largest event data an envelope carries. Brokers refuse large messages (Kafka's default is
 * 1 MiB per batch) and one refused message would hold up every event behind it; an event with
 * more data (a request with inline Base64 images) is published without it, marked `truncated`.
 */
export const MAX_ENVELOPE_DATA_BYTES = 256 * 1024;

/** Task and callback events go to the task topic, account events to billing; others stay inside. */
export function envelopeOf(e: RecordedDomainEvent): EventEnvelope | undefined {
  const [kind, ...rest] = e.streamName.split('-');
  const id = rest.join('-');
  const topic = kind === 'task' || kind === 'callback' ? TASK_TOPIC : kind === 'account' ? BILLING_TOPIC : undefined;
  if (!topic) return undefined;
  const accountId = topic === BILLING_TOPIC ? id : metadataText(e, 'accountId');
  return { ...envelopeHead(e, topic, id, accountId), ...dataOrTruncated(e.data) };
}

/** What administrators see happen to users; sessions stay out (noise, and their hashes are credentials). */
const USER_ADMIN_EVENTS = new Set(['UserRegistered', 'UserDisabled', 'UserEnabled', 'UserDeleted', 'UserPasswordChanged', 'UserGroupChanged']);

/**
 * The envelope of a user-administration event, for administrators' event streams: password
 * hashes are left out. Undefined for any other event.
 */
export function userAdminEnvelopeOf(e: RecordedDomainEvent): EventEnvelope | undefined {
  if (!e.streamName.startsWith('user-') || !USER_ADMIN_EVENTS.has(e.type)) return undefined;
  const { passwordHash: _hidden, ...data } = e.data as { passwordHash?: string };
  return { ...envelopeHead(e, USER_ADMIN_TOPIC, e.streamName.slice('user-'.length), metadataText(e, 'accountId')), data };
}

/** Every field of an envelope but its data: the event's identity and place, and the metadata it carries. */
function envelopeHead(e: RecordedDomainEvent, topic: EventEnvelope['topic'], key: string, accountId: string | null): Omit<EventEnvelope, 'data' | 'truncated'> {
  return {
    specversion: 'gateway.events.v1',
    id: e.id,
    type: e.type,
    topic,
    key,
    stream: e.streamName,
    revision: e.revision,
    position: e.position.toString(),
    time: e.metadata.at,
    accountId,
    correlationId: metadataText(e, 'correlationId'),
    causationId: metadataText(e, 'causationId'),
  };
}

const metadataText = (e: RecordedDomainEvent, field: 'accountId' | 'correlationId' | 'causationId'): string | null =>
  typeof e.metadata[field] === 'string' ? e.metadata[field] : null;

function dataOrTruncated(data: unknown): Pick<EventEnvelope, 'data' | 'truncated'> {
  const bytes = Buffer.byteLength(JSON.stringify(data) ?? '');
  return bytes > MAX_ENVELOPE_DATA_BYTES ? { data: null, truncated: { bytes } } : { data };
}
