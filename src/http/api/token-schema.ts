/** Request and record shapes of `/api/token/` (spec 4.1; fields decided in docs/decisions/0003-token-record.md). */
import { z } from 'zod';
import type { TokenDoc } from '../../../projections/tokens.js';
import { isValidAllowEntry } from '../auth/ip-allow-list.js';
import { maskKey } from '../auth/secrets.js';

/** A list given as an array, or as one comma/newline separated string (the common clients' form). */
const listOf = (v: string | string[]) => (Array.isArray(v) ? v : v.split(/[,\n]/)).map((s) => s.trim()).filter(Boolean);
const stringList = (item: z.ZodString) => z.union([z.array(item), z.string()]).transform(listOf);

const allowIp = z.string().refine(isValidAllowEntry, { message: 'must be an IP address or CIDR range' });

/**
 * The rule of an allow-list entry as the document states it: an IPv4 or IPv6 address, with or
 * without a CIDR prefix (zod's own patterns). The check itself is Node's (ip-allow-list.ts),
 * which also takes a few spellings these do not (IPv4-mapped IPv6, a prefix with leading zeros).
 */
const source = (re: RegExp) => re.source.replace(/^\^/, '').replace(/\$$/, '');
const ENTRY = `(?:${[z.regexes.ipv4, z.regexes.ipv6, z.regexes.cidrv4, z.regexes.cidrv6].map(source).join('|')})`;
/** One string of entries separated by commas or new lines (spaces and empty entries aside). */
const SEP = '[ \\t,\\n]*';
const allowIpList = z.union([
  z.array(z.string().meta({ pattern: `^${ENTRY}$` })),
  z.string().meta({ pattern: `^${SEP}(?:${ENTRY}(?:[ \\t]*[,\\n]${SEP}${ENTRY})*)?${SEP}$` }),
]);

export const TokenFields = z.object({
  name: z.string().max(64, 'must be at most 64 characters'),
  status: z.union([z.literal(1), z.literal(2)], { message: 'must be 1 (enabled) or 2 (disabled)' }),
  expired_time: z.number().int().min(-1, 'must be -1 (never) or Unix seconds'),
  remain_quota: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  unlimited_quota: z.boolean(),
  model_limits: stringList(z.string().min(1).max(128)),
  group: z.string().max(32),
  allow_ips: allowIpList.transform(listOf).pipe(z.array(allowIp)),
  channel_id: z.string().min(1).nullable(),
  /** null: the gateway's default (RATE_LIMIT_PER_MINUTE); 0: no limit. */
  rate_limit_per_minute: z.number().int().min(0).max(1_000_000).nullable(),
});

export const CreateTokenBody = TokenFields.partial().strict();
export const UpdateTokenBody = TokenFields.partial()
  .extend({ id: z.string().min(1) })
  .strict();

export const TokenRecord = z.object({
  id: z.string(),
  name: z.string(),
  key: z.string(),
  status: z.number(),
  expired_time: z.number(),
  remain_quota: z.number(),
  unlimited_quota: z.boolean(),
  used_quota: z.number(),
  model_limits: z.array(z.string()),
  group: z.string(),
  allow_ips: z.array(z.string()),
  channel_id: z.string().nullable(),
  rate_limit_per_minute: z.number().nullable(),
  created_time: z.number(),
});

export function tokenRecord(doc: TokenDoc, fullKey?: string): z.infer<typeof TokenRecord> {
  return {
    id: doc.tokenId,
    name: doc.name,
    key: fullKey ?? maskKey(doc.keyTail),
    status: doc.status,
    expired_time: doc.expiredTime,
    remain_quota: doc.remainQuota,
    unlimited_quota: doc.unlimitedQuota,
    used_quota: doc.usedQuota,
    model_limits: doc.modelLimits,
    group: doc.group,
    allow_ips: doc.allowIps,
    channel_id: doc.channelId,
    rate_limit_per_minute: doc.rateLimitPerMinute ?? null,
    created_time: Math.floor(Date.parse(doc.createdAt) / 1000),
  };
}
