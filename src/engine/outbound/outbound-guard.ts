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
import { addressesOf } from './name-addresses.js';
import type { AllowedDestinations } from '../../config/allowed-destinations.js';

export interface OutboundPolicy {
  allowLoopback: boolean;
  /** Origins (`http://host:port`) fetched without the address check. */
  trustedOrigins: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Destinations an operator allowed although they are not public (callbacks inside the deployment). */
  allowed?: AllowedDestinations;
}

function inAllowedNetwork(address: ipaddr.IPv4 | ipaddr.IPv6, allowed: AllowedDestinations | undefined): boolean {
  return (allowed?.networks ?? []).some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}

const isAllowedHost = (host: string, policy: OutboundPolicy): boolean => policy.allowed?.hosts.has(host.toLowerCase().replace(/\.$/, '')) ?? false;

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

/** The policy for completion callbacks: no origin trusted, the operator's allow-list honoured. */
export function callbackPolicy(
  config: { allowLoopbackOutbound: boolean; callbackAllowedDestinations?: AllowedDestinations },
  limits: Partial<Pick<OutboundPolicy, 'maxBytes' | 'timeoutMs' | 'maxRedirects'>> = {},
): OutboundPolicy {
  return { ...outboundPolicy(config, '', [], limits), ...(config.callbackAllowedDestinations ? { allowed: config.callbackAllowedDestinations } : {}) };
}

/** A URL's origin; undefined for what is not a URL (the guard then refuses it). */
export function originOf(url: string): string | undefined {
  // '' (a policy with no origin of its own) answered without the TypeError `new URL` throws:
  // building its stack and message was about 5 % of a submit's time.
  if (url === '') return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** Why an address may not be contacted, or undefined when it is public unicast (or allowed). */
export function blockedAddressReason(address: string, allowLoopback: boolean, allowed?: AllowedDestinations): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'not an IP address';
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (inAllowedNetwork(parsed, allowed)) return undefined;
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
  const reason = blockedAddressReason(host, policy.allowLoopback, policy.allowed);
  if (reason) throw new OutboundRefusedError(target.href, reason);
}

function firstBlocked(addresses: readonly LookupAddress[], policy: OutboundPolicy): string | undefined {
  return addresses.map((a) => blockedAddressReason(a.address, policy.allowLoopback, policy.allowed)).find((reason) => reason);
}

/** Every address of a name; node:dns unless a test stands in for DNS (rebinding). */
export type ResolveAll = (
  hostname: string,
  options: { family: number | 'IPv4' | 'IPv6'; hints: number },
  callback: (err: Error | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolveAll: ResolveAll = (hostname, options, callback) => dnsLookup(hostname, { ...options, all: true }, callback);

/** A socket lookup that resolves every address of the name and refuses if any is not public. */
function guardedLookup(policy: OutboundPolicy, url: string, resolveAll: ResolveAll = systemResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { family: options.family ?? 0, hints: options.hints ?? 0 }, (err, addresses) => {
      if (err) return callback(err, '');
      const reason = isAllowedHost(hostname, policy) ? undefined : firstBlocked(addresses, policy);
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
  if (isIP(host) !== 0 || isAllowedHost(host, policy)) return;
  // `localhost` and `*.localhost` are loopback by definition (RFC 6761), whatever a resolver
  // says or how slowly it says it.
  if (/^(?:.+\.)?localhost\.?$/i.test(host)) {
    const reason = blockedAddressReason('127.0.0.1', policy.allowLoopback);
    if (reason) throw new OutboundRefusedError(url, `${host} resolves to a refused address (${reason})`);
    return;
  }
  // Best-effort for a name the upstream resolves in its own network: what an upstream fetches is
  // its own to guard, and every fetch the gateway makes itself is pinned (`guardedLookup`).
  const addresses = await addressesOf(host, resolveTimeoutMs);
  const reason = firstBlocked(addresses, policy);
  if (reason) throw new OutboundRefusedError(url, `${host} resolves to a refused address (${reason})`);
}

export interface Downloaded {
  bytes: Buffer;
  contentType: string | undefined;
  /** The URL the bytes came from after redirects. */
  finalUrl: string;
}

/** A download under way: headers are in, the body arrives as it is read. */
export interface DownloadStream {
  /**
   * The body, chunk by chunk; read it once. It fails past `policy.maxBytes`, at the deadline
   * (`policy.timeoutMs` from the start, or the caller's signal) and when the connection breaks.
   */
  body: AsyncIterable<Buffer>;
  contentType: string | undefined;
  /** The URL the bytes come from after redirects. */
  finalUrl: string;
  /** Drops the connection, for a body that will not be read to its end. */
  abort(): void;
}

export interface DownloadOptions {
  /** Ends the download early (a task's deadline); combined with `policy.timeoutMs`. */
  signal?: AbortSignal | undefined;
  /**
   * Request headers (a channel's credential) sent only to the origin of `url`: a redirect to
   * another origin is followed without them.
   */
  headers?: Readonly<Record<string, string>>;
}

/** The source answered a status other than 2xx (after redirects). */
export class DownloadStatusError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`download ${url}: answered ${status}`);
    this.name = 'DownloadStatusError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `url` under the policy into memory: every hop checked, size and time limits. */
export async function guardedDownload(url: string, policy: OutboundPolicy, options: DownloadOptions = {}): Promise<Downloaded> {
  const download = await openGuardedDownload(url, policy, options);
  const chunks: Buffer[] = [];
  for await (const chunk of download.body) chunks.push(chunk);
  return { bytes: Buffer.concat(chunks), contentType: download.contentType, finalUrl: download.finalUrl };
}

/**
 * Opens a GET of `url` under the policy: every hop checked, redirects by hand, and one
 * deadline for the headers and the whole body. The body is streamed, so a caller can store a
 * large file without holding it; a declared length over the limit is refused before reading.
 */
export async function openGuardedDownload(url: string, policy: OutboundPolicy, options: DownloadOptions = {}): Promise<DownloadStream> {
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const firstOrigin = parseTarget(url).origin;
  let current = url;
  for (let hop = 0; ; hop++) {
    const target = parseTarget(current);
    const trusted = policy.trustedOrigins.includes(target.origin);
    if (!trusted) checkLiteral(target, policy);
    const headers = target.origin === firstOrigin ? (options.headers ?? {}) : {};
    let res: IncomingMessage;
    try {
      res = await get(target, trusted ? undefined : guardedLookup(policy, target.href), signal, headers);
    } catch (err) {
      throw err instanceof OutboundRefusedError ? err : new Error(`download ${target.href}: ${whyFailed(err, timeout, policy.timeoutMs)}`);
    }
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
      throw new DownloadStatusError(target.href, status);
    }
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > policy.maxBytes) {
      res.destroy();
      throw new OutboundRefusedError(target.href, `${declared} bytes is over the ${policy.maxBytes} byte limit`);
    }
    const type = res.headers['content-type'];
    return {
      body: limitedBody(res, target.href, policy, timeout),
      contentType: type?.split(';')[0]?.trim() || undefined,
      finalUrl: target.href,
      abort: () => res.destroy(),
    };
  }
}

function whyFailed(err: unknown, timeout: AbortSignal, timeoutMs: number): string {
  if (timeout.aborted) return `not finished within ${timeoutMs} ms`;
  return err instanceof Error ? err.message : String(err);
}

/** A checked hop gets its own connection (`agent: false`): a pooled one would skip the lookup. */
function get(target: URL, lookup: LookupFunction | undefined, signal: AbortSignal, headers: Readonly<Record<string, string>>): Promise<IncomingMessage> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method: 'GET', signal, headers: { accept: 'image/*,*/*;q=0.8', ...headers }, ...(lookup ? { lookup, agent: false } : {}) },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

/** The response body, cut off past `maxBytes`; the connection is dropped if it is left unread. */
async function* limitedBody(res: IncomingMessage, url: string, policy: OutboundPolicy, timeout: AbortSignal): AsyncGenerator<Buffer> {
  let total = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > policy.maxBytes) throw new OutboundRefusedError(url, `over the ${policy.maxBytes} byte limit`);
      yield chunk;
    }
    // A connection closed before the declared end is a broken download, not a short file.
    if (!res.complete) throw new Error('connection closed before the end of the body');
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw err;
    throw new Error(`download ${url}: ${whyFailed(err, timeout, policy.timeoutMs)}`);
  } finally {
    if (!res.complete) res.destroy();
  }
}

// ---- guarded POST (completion callbacks) ---------------------------------------------------

/**
 * POSTs `body` to `url` under the policy, for completion callbacks: the address is checked inside
 * the socket's own lookup, so the name cannot resolve to something else between the check and
 * the connection (DNS rebinding); no origin is trusted; a redirect is not followed (its status
 * is the answer); one deadline covers connect and answer. Resolves with the HTTP status.
 * A fresh connection per call (`agent: false`): a pooled socket opened by another request
 * would skip this lookup.
 */
export async function guardedPost(
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  policy: OutboundPolicy,
  resolveAll?: ResolveAll,
): Promise<number> {
  const target = parseTarget(url);
  checkLiteral(target, policy);
  const signal = AbortSignal.timeout(policy.timeoutMs);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        signal,
        agent: false,
        lookup: guardedLookup(policy, target.href, resolveAll),
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        // The answer's body is not used; drained (or cut off by the deadline) so the socket closes.
        res.on('error', () => undefined);
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', (err) => reject(signal.aborted ? (signal.reason as Error) : err));
    req.end(body);
  });
}
