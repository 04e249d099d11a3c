/**
 * The event catalog: every event type the gateway appends, with its zod schema.
 * Event type names are PascalCase past tense. Money is an integer count of quota units.
 */
import { z } from 'zod';

const quota = z.number().int();
const nonNegativeQuota = quota.min(0);

/** What a charge was computed from, recorded with the reservation so auditors can trace it. */
export const PriceBasis = z.object({
  model: z.string(),
  group: z.string(),
  /** Unit the model is priced in: per request, image, second of video, or 1K tokens. */
  unit: z.enum(['request', 'image', 'second', 'ktoken']),
  unitPrice: nonNegativeQuota,
  /** Group ratio in permille (1000 = 1.0), integer so the arithmetic stays integral. */
  groupRatioPermille: z.number().int().min(0),
  units: z.number().min(0),
  tier: z.string().optional(),
  /** Extra per-request surcharge (e.g. separately priced audio). */
  extra: nonNegativeQuota.optional(),
  /** The model's per-tier unit prices at submit time, so settlement on another tier uses them. */
  tierPrices: z.record(z.string(), nonNegativeQuota).optional(),
});
export type PriceBasis = z.infer<typeof PriceBasis>;

// ---- account-<accountId> ----
export const AccountOpened = z.object({ accountId: z.string(), userId: z.string(), group: z.string() });
export const QuotaCredited = z.object({ creditId: z.string(), amount: quota.positive(), note: z.string(), by: z.string().optional() });
export const QuotaReserved = z.object({
  reservationId: z.string(),
  taskId: z.string(),
  amount: nonNegativeQuota,
  model: z.string(),
  tokenId: z.string().optional(),
  basis: PriceBasis,
});
export const QuotaSettled = z.object({
  reservationId: z.string(),
  taskId: z.string(),
  reserved: nonNegativeQuota,
  /** What the result actually cost (may exceed the reservation). */
  actual: nonNegativeQuota,
  /** What was charged: `actual`, capped so the available balance never goes below zero. */
  charged: nonNegativeQuota,
  basis: PriceBasis.optional(),
  /**
   * The units the upstream claimed to deliver when they were more than the request asked for
   * (50 images for `n=1`); `basis.units` is what was charged. Absent when it delivered no more.
   */
  deliveredUnits: z.number().min(0).optional(),
  /** The token the reservation was made with, so token usage can be projected. */
  tokenId: z.string().optional(),
});
export const QuotaReleased = z.object({
  reservationId: z.string(),
  taskId: z.string(),
  amount: nonNegativeQuota,
  reason: z.string(),
  tokenId: z.string().optional(),
  /** The reserved model (absent on releases recorded before it was kept). */
  model: z.string().optional(),
});
export const QuotaDebited = z.object({
  debitId: z.string(),
  amount: quota.positive(),
  reason: z.string(),
  taskId: z.string().optional(),
  by: z.string().optional(),
});
const SnapshotReservation = z.object({
  reservationId: z.string(),
  amount: nonNegativeQuota,
  taskId: z.string(),
  model: z.string(),
  tokenId: z.string().optional(),
});
const SnapshotTokenUsage = z.object({ tokenId: z.string(), reserved: quota, used: quota });
/**
 * Closing the books: the account as the events before this one leave it, appended by the
 * account service about every 1,000 events (domain/account-snapshot.ts), so loading the account
 * reads back only to here. No new fact: the audit replays every movement and checks each
 * snapshot against its replay. From here on the account remembers only the most recently closed
 * reservation ids (`recentlyClosedReservationIds`, oldest first), in a replay as in a load from
 * here, so what it keeps in memory does not grow with its history.
 */
export const AccountSnapshotted = z.object({
  accountId: z.string(),
  userId: z.string(),
  group: z.string(),
  balance: quota,
  reserved: nonNegativeQuota,
  usedQuota: nonNegativeQuota,
  openReservations: z.array(SnapshotReservation),
  tokenUsage: z.array(SnapshotTokenUsage),
  recentlyClosedReservationIds: z.array(z.string()),
  creditIds: z.array(z.string()),
  debitIds: z.array(z.string()),
});
/**
 * Closing the books of an account too large for one append (thousands of reservations open):
 * the snapshot's lists cut into `parts` events, numbered from 0, appended one after the other
 * with nothing between them (domain/account-snapshot-parts.ts). The last part carries the
 * figures and the closed ids kept (`summary`): the books are closed there, exactly as at an
 * `AccountSnapshotted`. Parts without their last one (an attempt another writer cut short) mean
 * nothing. A type of its own, not an `AccountSnapshotted` with a new field, so a reader that
 * does not know it ignores it (and reads back further) instead of taking a part for the whole.
 */
export const AccountSnapshotPartWritten = z.object({
  snapshotId: z.string(),
  part: z.number().int().min(0),
  parts: z.number().int().min(2),
  openReservations: z.array(SnapshotReservation),
  tokenUsage: z.array(SnapshotTokenUsage),
  creditIds: z.array(z.string()),
  debitIds: z.array(z.string()),
  /** The figures and the closed ids kept: the snapshot but its lists. */
  summary: AccountSnapshotted.omit({ openReservations: true, tokenUsage: true, creditIds: true, debitIds: true }).optional(),
});

// ---- user-<userId> ----
export const UserRole = z.enum(['admin', 'user']);
export const UserRegistered = z.object({
  userId: z.string(),
  username: z.string(),
  passwordHash: z.string(),
  role: UserRole,
  group: z.string(),
  accountId: z.string(),
});
/** Stream `username-<lowercased name>`: appended with no_stream, so a name is taken once. */
export const UsernameClaimed = z.object({ userId: z.string(), username: z.string() });
export const UserSessionStarted = z.object({ sessionHash: z.string(), expiresAt: z.number().int() });
export const UserSessionEnded = z.object({ sessionHash: z.string() });
/** Administration (`by`: the administrator's user id, or the user's own for a password they changed). */
export const UserDisabled = z.object({ by: z.string(), reason: z.string() });
export const UserEnabled = z.object({ by: z.string() });
/** Soft: the streams stay for the audit and the name stays taken; nothing undoes it. */
export const UserDeleted = z.object({ by: z.string() });
export const UserPasswordChanged = z.object({ passwordHash: z.string(), by: z.string() });
/** `previous`: the group left, so the keys still in it can follow (engine/accounts/user-admin.ts). */
export const UserGroupChanged = z.object({ group: z.string(), previous: z.string(), by: z.string() });

// ---- token-<tokenId> ----
export const TokenSettings = z.object({
  name: z.string(),
  status: z.union([z.literal(1), z.literal(2)]),
  /** Unix seconds, or -1 for never. */
  expiredTime: z.number().int(),
  remainQuota: nonNegativeQuota,
  unlimitedQuota: z.boolean(),
  modelLimits: z.array(z.string()),
  group: z.string(),
  allowIps: z.array(z.string()),
  channelId: z.string().nullable(),
  /**
   * Requests per minute this key may make; 0: no limit; null or absent (every token created
   * before the setting existed): the gateway's RATE_LIMIT_PER_MINUTE.
   */
  rateLimitPerMinute: z.number().int().min(0).nullable().optional(),
});
export type TokenSettings = z.infer<typeof TokenSettings>;
export const TokenCreated = TokenSettings.extend({
  tokenId: z.string(),
  accountId: z.string(),
  userId: z.string(),
  keyHash: z.string(),
  /** Last four characters of the key, so a user can tell keys apart without the secret. */
  keyTail: z.string(),
});
export const TokenUpdated = z.object({ changes: TokenSettings.partial() });
export const TokenDeleted = z.object({ tokenId: z.string() });

// ---- channel-<channelId> ----
export const ChannelSettings = z.object({
  name: z.string(),
  /** Upstream protocol family (image, vidgen, ...): which adapter speaks to it. */
  family: z.string(),
  baseUrl: z.string(),
  /**
   * Upstream credential, as ciphertext `enc:v1:<keyId>:<iv>:<data>` (src/engine/channels/channel-key-cipher.ts);
   * clear text in events from before encryption. Never returned by the API or logged (see docs/decisions/0106-channel-keys-encrypted-at-rest.md).
   */
  key: z.string(),
  models: z.array(z.string()),
  modelMapping: z.record(z.string(), z.string()),
  groups: z.array(z.string()),
  priority: z.number().int(),
  weight: z.number().int().min(0),
  status: z.union([z.literal(1), z.literal(2)]),
});
export type ChannelSettings = z.infer<typeof ChannelSettings>;
export const ChannelCreated = ChannelSettings.extend({ channelId: z.string() });
export const ChannelUpdated = z.object({ changes: ChannelSettings.partial() });
export const ChannelDeleted = z.object({ channelId: z.string() });

// ---- pricing ----
export const ModelPrice = z.object({
  unit: PriceBasis.shape.unit,
  /** Price of one unit; for tiered units the default when the tier has no own price. */
  price: nonNegativeQuota,
  /** Per-tier unit prices (video resolutions, image size presets). */
  tiers: z.record(z.string(), nonNegativeQuota).optional(),
  /** Per-request surcharges by option name (e.g. `audio`). */
  extras: z.record(z.string(), nonNegativeQuota).optional(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;
export const PriceTable = z.object({
  models: z.record(z.string(), ModelPrice),
  groupRatios: z.record(z.string(), z.number().int().min(0)),
});
export type PriceTable = z.infer<typeof PriceTable>;
export const PricesSet = PriceTable;

// ---- task-<taskId> ----
export const TaskSubmitted = z.object({
  taskId: z.string(),
  family: z.string(),
  /** Family-specific kind of request (text2video, edit, lyrics, IMAGINE, ...). */
  action: z.string(),
  model: z.string(),
  accountId: z.string(),
  tokenId: z.string(),
  group: z.string(),
  channelCandidates: z.array(z.string()),
  /** The validated request, with secrets and inline Base64 payloads stripped. */
  request: z.record(z.string(), z.unknown()),
  reservationId: z.string(),
  reserved: nonNegativeQuota,
  basis: PriceBasis,
  /** Unix seconds. */
  createdAt: z.number().int(),
  callbackUrl: z.string().optional(),
  idempotencyKey: z.string().optional(),
  /** Hash of the canonical request body, when submitted with an Idempotency-Key. */
  requestHash: z.string().optional(),
  /** Synchronous calls are executed by the request itself; the dispatcher leaves them alone. */
  sync: z.boolean().optional(),
});
/**
 * The fencing token of the submit lease an outcome was recorded under (the claim's `epoch`).
 * Absent where no lease was taken (synchronous calls: their request is their only executor) and
 * in events of earlier versions.
 */
const submitEpoch = z.number().int().min(1).optional();
export const UpstreamSubmitted = z.object({ channelId: z.string(), upstreamTaskId: z.string(), attempt: z.number().int(), epoch: submitEpoch });
export const UpstreamSubmitFailed = z.object({
  channelId: z.string(),
  reason: z.string(),
  retryable: z.boolean(),
  attempt: z.number().int(),
  epoch: submitEpoch,
});
/**
 * A dispatcher's lease on submitting the task upstream on `channelId`, appended with the expected
 * revision before the submit: no other instance submits the task until the lease ends (an
 * UpstreamSubmitted/UpstreamSubmitFailed of it, or another instance having watched it open for a
 * whole lease; `leaseUntil`, epoch seconds on the holder's clock, is what the holder promised).
 * `epoch` is the fencing token: 1 for a task's first claim, one more for each claim after it; an
 * outcome is recorded only under the epoch of the claim still open (docs/decisions/0122-fencing-the-submit-lease.md). Claims of earlier versions carry none: their epoch is their ordinal among
 * the stream's claims, the same number.
 */
export const UpstreamSubmitClaimed = z.object({
  channelId: z.string(),
  attempt: z.number().int(),
  owner: z.string().min(1),
  leaseUntil: z.number().int(),
  epoch: z.number().int().min(1).optional(),
});
export const TaskStatus = z.enum(['queued', 'in_progress']);
export const TaskProgressed = z.object({
  status: TaskStatus,
  /** 0..100 */
  progress: z.number().int().min(0).max(100),
  upstream: z.record(z.string(), z.unknown()).optional(),
});
export const TaskResultItem = z.object({
  kind: z.enum(['image', 'video', 'audio', 'text']),
  assetKey: z.string().optional(),
  /**
   * How the client gets a re-hosted asset: `url`, a gateway URL signed when a view is read by
   * the instance that answers (domain/asset-ref.ts); `b64`, the bytes inlined. Absent in events
   * of earlier versions: there `url` present means `url`.
   */
  delivery: z.enum(['url', 'b64']).optional(),
  /**
   * Only in events of earlier versions: the URL the re-hosting instance signed. New events
   * carry the asset key, never a URL; readers sign the key (docs/decisions/0067-result-urls-signed-where-read.md).
   */
  url: z.string().optional(),
  contentType: z.string().optional(),
  /** Base64 kept in the event only where the family returns Base64 (pro-image). */
  b64: z.string().optional(),
  text: z.string().optional(),
  revisedPrompt: z.string().optional(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
  durationSeconds: z.number().optional(),
});
export type TaskResultItem = z.infer<typeof TaskResultItem>;
export const TaskSucceeded = z.object({
  results: z.array(TaskResultItem),
  /** What settlement is computed from: units returned (images, seconds, tokens), tier. */
  usage: z.object({ units: z.number().min(0), tier: z.string().optional() }).catchall(z.unknown()),
  upstream: z.record(z.string(), z.unknown()).optional(),
  /** Unix seconds when assets expire (0 when there are none). */
  assetsExpireAt: z.number().int(),
  completedAt: z.number().int(),
});
export const TaskFailed = z.object({ code: z.string(), reason: z.string(), completedAt: z.number().int() });
export const AssetsExpired = z.object({ assetKeys: z.array(z.string()) });

// ---- callback-<taskId>: completion callback deliveries ----
export const CallbackScheduled = z.object({
  taskId: z.string(),
  accountId: z.string(),
  family: z.string(),
  url: z.string(),
  /** Unix milliseconds of the first attempt. */
  nextAttemptAt: z.number().int(),
  /**
   * Revision of the final task event that scheduled the delivery: the body is the task's query
   * view folded from its stream up to this event, so it is final and the same on every attempt.
   * Absent on schedules recorded before it existed (then: up to the first final event).
   */
  taskRevision: z.number().int().min(0).optional(),
});
export const CallbackAttempted = z.object({
  attempt: z.number().int().min(1),
  /** HTTP status, or 0 when no answer came (timeout, refused, guard). */
  status: z.number().int(),
  latencyMs: z.number().int().min(0),
  error: z.string().optional(),
  /** Unix milliseconds of the next attempt; absent when this was the last. */
  nextAttemptAt: z.number().int().optional(),
});
export const CallbackDelivered = z.object({ attempt: z.number().int() });
export const CallbackDeadLettered = z.object({ attempts: z.number().int(), reason: z.string() });

// ---- webhooks-<accountId>: the account's signing secret ----
export const WebhookSecretRotated = z.object({ secret: z.string() });

// ---- idem-<hash of token id and Idempotency-Key> ----
export const IdempotencyKeyClaimed = z.object({ taskId: z.string(), requestHash: z.string(), tokenId: z.string() });
/** The submit behind a claim failed before its task existed: the key may be used again. */
export const IdempotencyKeyReleased = z.object({ taskId: z.string(), reason: z.string() });

export const eventSchemas = {
  AccountOpened,
  QuotaCredited,
  QuotaReserved,
  QuotaSettled,
  QuotaReleased,
  QuotaDebited,
  AccountSnapshotted,
  AccountSnapshotPartWritten,
  UserRegistered,
  UsernameClaimed,
  UserSessionStarted,
  UserSessionEnded,
  UserDisabled,
  UserEnabled,
  UserDeleted,
  UserPasswordChanged,
  UserGroupChanged,
  TokenCreated,
  TokenUpdated,
  TokenDeleted,
  ChannelCreated,
  ChannelUpdated,
  ChannelDeleted,
  PricesSet,
  TaskSubmitted,
  UpstreamSubmitClaimed,
  UpstreamSubmitted,
  UpstreamSubmitFailed,
  TaskProgressed,
  TaskSucceeded,
  TaskFailed,
  AssetsExpired,
  IdempotencyKeyClaimed,
  IdempotencyKeyReleased,
  CallbackScheduled,
  CallbackAttempted,
  CallbackDelivered,
  CallbackDeadLettered,
  WebhookSecretRotated,
} as const;

export type EventType = keyof typeof eventSchemas;
export type EventDataOf<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;

/** A domain event as decide/evolve see it: a discriminated union over the catalog. */
export type DomainEvent = { [T in EventType]: Readonly<{ type: T; data: EventDataOf<T> }> }[EventType];
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

export const streams = {
  task: (id: string) => `task-${id}`,
  account: (id: string) => `account-${id}`,
  user: (id: string) => `user-${id}`,
  username: (name: string) => `username-${name.toLowerCase()}`,
  token: (id: string) => `token-${id}`,
  channel: (id: string) => `channel-${id}`,
  pricing: () => 'pricing',
  idempotency: (hash: string) => `idem-${hash}`,
  callback: (taskId: string) => `callback-${taskId}`,
  webhooks: (accountId: string) => `webhooks-${accountId}`,
} as const;

/** The task id of a task stream's name (`task-<taskId>`, streams.task). */
export const taskIdOfStream = (streamName: string): string => streamName.slice('task-'.length);

/** Every stream prefix the gateway writes: subscriptions filter on these. */
export const gatewayStreamPrefixes = ['task-', 'account-', 'user-', 'username-', 'token-', 'channel-', 'pricing', 'callback-', 'webhooks-'] as const;
