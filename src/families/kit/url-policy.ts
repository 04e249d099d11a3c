/**
 * The one policy for URLs a request names (reference media handed to an upstream, callback
 * addresses the gateway will POST to), applied at submit by every family before anything is
 * reserved or appended (spec 4.9: public http/https URLs). A refusal is a 400 `invalid_request`
 * naming the field, rendered in the family's error shape.
 *
 * - The address rules are the outbound guard's (`checkOutboundUrl`): http/https only, no
 *   credentials, IP literals in any notation (the WHATWG parser normalises `0x7f000001`,
 *   `2130706433`, `127.1`, `[::ffff:127.0.0.1]`), names resolving to a refused address. A name
 *   that does not resolve here is let through (the upstream reports it). Loopback only with
 *   `ALLOW_LOOPBACK_OUTBOUND`.
 * - No origin is trusted, not even the gateway's own: a client must not make anyone fetch the
 *   gateway's internal endpoints. The one exception is a reference that is one of the gateway's
 *   own signed, unexpired asset URLs (a result used as the next input): it reaches only
 *   `GET /assets/…`, which serves that file to anyone holding the URL anyway.
 * - Lengths and counts are bounded so a URL cannot carry a payload into the events.
 */
import { callbackPolicy, checkOutboundUrl, OutboundRefusedError, outboundPolicy } from '../../engine/outbound/outbound-guard.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError } from '../../http/errors.js';
import { type UrlField, type UrlFieldSpec, urlFields } from './url-fields.js';

export const MAX_URLS_PER_REQUEST = 64;
export const MAX_REFERENCE_URL_CHARS = 8192;
export const MAX_CALLBACK_URL_CHARS = 2048;

type PolicyDeps = Pick<GatewayDeps, 'config' | 'signer' | 'clock'>;

const notAllowed = (param: string, reason: string): GatewayError =>
  new GatewayError(400, 'invalid_request', `${param}: the URL is not allowed: ${reason}`, param);

/** The gateway's own asset URL with a valid signature that has not expired. */
function isOwnSignedAsset(deps: PolicyDeps, text: string): boolean {
  let url: URL;
  let own: URL;
  try {
    url = new URL(text);
    // The signer builds every asset URL on the public base; its origin is the gateway's.
    own = new URL(deps.signer.url('probe', 0));
  } catch {
    return false;
  }
  if (url.origin !== own.origin || url.username || url.password || !url.pathname.startsWith('/assets/')) return false;
  const key = url.pathname.slice('/assets/'.length);
  const exp = Number(url.searchParams.get('exp'));
  const sig = url.searchParams.get('sig');
  if (!sig || !Number.isSafeInteger(exp) || exp * 1000 <= deps.clock().getTime()) return false;
  return deps.signer.verify(key, exp, sig);
}

function checkShape(field: UrlField): void {
  const max = field.use === 'callback' ? MAX_CALLBACK_URL_CHARS : MAX_REFERENCE_URL_CHARS;
  if (field.url.length > max) throw new GatewayError(400, 'invalid_request', `${field.param}: must be a URL of at most ${max} characters`, field.param);
}

/** The policy on the URL fields a route declares, read from the body the client sent: refuses the first (in request order) whose URL is not allowed. */
export async function enforceUrlPolicyOn(deps: PolicyDeps, body: unknown, specs: readonly UrlFieldSpec[]): Promise<void> {
  const fields = urlFields(body, specs);
  const over = fields[MAX_URLS_PER_REQUEST];
  if (over) throw new GatewayError(400, 'invalid_request', `${over.param}: at most ${MAX_URLS_PER_REQUEST} URLs in one request`, over.param);
  if (fields.length === 0) return;
  fields.forEach(checkShape);
  const references = outboundPolicy(deps.config, '', []);
  // Callbacks are the gateway's own POSTs: the operator's allow-list applies to them only.
  const callbacks = callbackPolicy(deps.config);
  // Resolved together; the first refusal in request order is reported.
  const checks = await Promise.allSettled(
    fields.map((field) =>
      field.use === 'reference'
        ? isOwnSignedAsset(deps, field.url)
          ? Promise.resolve()
          : checkOutboundUrl(field.url, references)
        : checkOutboundUrl(field.url, callbacks),
    ),
  );
  checks.forEach((check, index) => {
    if (check.status === 'fulfilled') return;
    const err: unknown = check.reason;
    const param = fields[index]?.param ?? 'body';
    if (err instanceof OutboundRefusedError) throw notAllowed(param, err.reason);
    throw err;
  });
}
