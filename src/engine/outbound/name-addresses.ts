/**
 * The addresses a host name resolves to, for the submit-time URL check (checkOutboundUrl). One
 * lookup per name at a time, its answer remembered for a short while: a request names the same
 * host several times (frames, references, a callback) and clients send many requests naming one
 * host, while `dns.lookup` runs on libuv's four pool threads that file reads share, and a resolver
 * that drops a query makes glibc wait 5 s before it asks again (measured here: 8 concurrent
 * lookups of names that do not exist, 5 of them 5 s). What the gateway fetches itself is not read
 * from here: its sockets resolve and check each connection anew (guardedLookup).
 *
 * A name that does not resolve, or not within the timeout, has no addresses (the check lets it
 * through for the upstream to report); that answer is kept as long as any other.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { LRUCache } from 'lru-cache';

/** How long an answer is kept: short beside a DNS TTL, long beside a burst of submits. */
export const NAME_ANSWER_TTL_MS = 30_000;
const MAX_NAMES = 10_000;

/** The system's lookup (getaddrinfo: hosts file, then DNS), or a resolver a test stands in. */
export type LookupAll = (host: string, options: { all: true }, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

/** `addressesOf` over a lookup of its own, with its own memory. */
export function nameAnswers(lookup: LookupAll = dnsLookup, ttlMs = NAME_ANSWER_TTL_MS): (host: string, timeoutMs: number) => Promise<LookupAddress[]> {
  const lookupWithin = (host: string, timeoutMs: number): Promise<LookupAddress[]> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve([]), timeoutMs);
      lookup(host, { all: true }, (err, addresses) => {
        clearTimeout(timer);
        resolve(err ? [] : addresses);
      });
    });
  const answers = new LRUCache<string, LookupAddress[], number>({
    max: MAX_NAMES,
    ttl: ttlMs,
    fetchMethod: (host, _stale, { context }) => lookupWithin(host, context),
  });
  return async (host, timeoutMs) => (await answers.fetch(host.toLowerCase(), { context: timeoutMs })) ?? [];
}

/** The name's addresses; none when it does not resolve here or not within `timeoutMs`. */
export const addressesOf = nameAnswers();
