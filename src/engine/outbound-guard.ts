/**
 * The one guard for URLs the gateway itself fetches (result images, downloads for Base64) or
 * hands on for an upstream to fetch (reference images). It refuses every address that is not
 * public unicast: private, loopback, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, unique-local, multicast, reserved and IPv4-mapped forms of those.
 *
 * - The check runs on the address actually connected to: IP literals before the request,
 *   host names inside the socket's DNS lookup, so a name cannot resolve differently between
 *   the check and the connection.
 * - Redirects are followed by hand, each hop checked again, at most `maxRedirects`.
 * - One deadline covers the whole download; the body is cut off past `maxBytes`.
 * - Loopback is allowed only when configured (`ALLOW_LOOPBACK_OUTBOUND`, tests).
 * - `trustedOrigins` (the gateway itself, where the built-in simulator lives at `/_sim`, and
 *   the calling channel's own origin) skip the address check; a redirect away from them is
 *   checked like any other URL.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface OutboundPolicy {
  allowLoopback: boolean;
  /** Origins (`http://host:port`) fetched without the address check. */
  trustedOrigins: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_OUTBOUND_LIMITS = { maxBytes: 64 * 1024 * 1024, timeoutMs: 60_000, maxRedirects: 5 } as const;

/** A URL the guard will not fetch; `reason` says why (for the client-visible message). */
export class OutboundRefusedError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${url} refused: ${reason}`);
    this.name = 'OutboundRefusedError';
  }
}

/** The gateway's policy: loopback as configured, its own origin and `extraTrusted` trusted. */
export function outboundPolicy(
  config: { allowLoopbackOutbound: boolean },
  selfUrl: string,
  extraTrusted: readonly string[] = [],
  limits: Partial<Pick<OutboundPolicy, 'maxBytes' | 'timeoutMs' | 'maxRedirects'>> = {},
): OutboundPolicy {
  const origins = [selfUrl, ...extraTrusted].map(originOf).filter((o): o is string => o !== undefined);
  return { ...DEFAULT_OUTBOUND_LIMITS, ...limits, allowLoopback: config.allowLoopbackOutbound, trustedOrigins: [...new Set(origins)] };
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Why an address may not be contacted, or undefined when it is public unicast. */
export function blockedAddressReason(address: string, allowLoopback: boolean): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'not an IP address';
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && allowLoopback) return undefined;
  return `${bare} is a ${range} address`;
}

function parseTarget(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new OutboundRefusedError(url, 'not a valid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new OutboundRefusedError(url, 'only http and https URLs are fetched');
  if (target.username || target.password) throw new OutboundRefusedError(url, 'URLs with credentials are not fetched');
  return target;
}

const hostOf = (target: URL): string => target.hostname.replace(/^\[|\]$/g, '');

/** Refuses an IP-literal host at once; names are checked when they resolve. */
function checkLiteral(target: URL, policy: OutboundPolicy): void {
  const host = hostOf(target);
  if (isIP(host) === 0) return;
  const reason = blockedAddressReason(host, policy.allowLoopback);
  if (reason) throw new OutboundRefusedError(target.href, reason);
}

function firstBlocked(addresses: readonly LookupAddress[], allowLoopback: boolean): string | undefined {
  for (const a of addresses) {
    const reason = blockedAddressReason(a.address, allowLoopback);
    if (reason) return reason;
  }
  return undefined;
}

/** A socket lookup that resolves every address of the name and refuses if any is not public. */
function guardedLookup(policy: OutboundPolicy, url: string): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { family: options.family ?? 0, hints: options.hints ?? 0, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const reason = firstBlocked(addresses, policy.allowLoopback);
      if (reason) return callback(new OutboundRefusedError(url, `${hostname} resolves to a refused address (${reason})`), '');
      const first = addresses[0];
      if (!first) return callback(new OutboundRefusedError(url, `${hostname} has no address`), '');
      if (options.all) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Checks a URL someone else will fetch (a reference image handed to the upstream): syntax,
 * IP literals, and what the name resolves to now. A name that does not resolve here is let
 * through (the upstream reports it); a name resolving to a refused address is refused.
 */
export async function checkOutboundUrl(url: string, policy: OutboundPolicy, resolveTimeoutMs = 2_000): Promise<void> {
  const target = parseTarget(url);
  if (policy.trustedOrigins.includes(target.origin)) return;
  checkLiteral(target, policy);
  const host = hostOf(target);
  if (isIP(host) !== 0) return;
  const addresses = await resolveWithin(host, resolveTimeoutMs);
  const reason = firstBlocked(addresses, policy.allowLoopback);
  if (reason) throw new OutboundRefusedError(url, `${host} resolves to a refused address (${reason})`);
}

function resolveWithin(host: string, timeoutMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs);
    dnsLookup(host, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? [] : addresses);
    });
  });
}

export interface Downloaded {
  bytes: Buffer;
  contentType: string | undefined;
  /** The URL the bytes came from after redirects. */
  finalUrl: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `url` under the policy: every hop checked, redirects by hand, size and time limits. */
export async function guardedDownload(url: string, policy: OutboundPolicy): Promise<Downloaded> {
  const signal = AbortSignal.timeout(policy.timeoutMs);
  let current = url;
  for (let hop = 0; ; hop++) {
    const target = parseTarget(current);
    const trusted = policy.trustedOrigins.includes(target.origin);
    if (!trusted) checkLiteral(target, policy);
    const res = await get(target, trusted ? undefined : guardedLookup(policy, target.href), signal);
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status)) {
      res.resume();
      const location = res.headers.location;
      if (!location) throw new Error(`download ${target.href}: redirect without a location`);
      if (hop >= policy.maxRedirects) throw new OutboundRefusedError(url, `more than ${policy.maxRedirects} redirects`);
      current = new URL(location, target).href;
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw new Error(`download ${target.href}: answered ${status}`);
    }
    const bytes = await readLimited(res, policy.maxBytes, target.href);
    const type = res.headers['content-type'];
    return { bytes, contentType: type?.split(';')[0]?.trim() || undefined, finalUrl: target.href };
  }
}

function get(target: URL, lookup: LookupFunction | undefined, signal: AbortSignal): Promise<IncomingMessage> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(target, { method: 'GET', signal, headers: { accept: 'image/*,*/*;q=0.8' }, ...(lookup ? { lookup } : {}) }, resolve);
    req.on('error', reject);
    req.end();
  });
}

function readLimited(res: IncomingMessage, maxBytes: number, url: string): Promise<Buffer> {
  const declared = Number(res.headers['content-length'] ?? 0);
  if (declared > maxBytes) {
    res.destroy();
    return Promise.reject(new Error(`download ${url}: ${declared} bytes is over the ${maxBytes} byte limit`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      reject(err);
      res.destroy();
    };
    res.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) return fail(new Error(`download ${url}: over the ${maxBytes} byte limit`));
      chunks.push(chunk);
    });
    res.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    res.on('error', fail);
    res.on('aborted', () => fail(new Error(`download ${url}: connection aborted`)));
  });
}
