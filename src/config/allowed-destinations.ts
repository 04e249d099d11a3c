/**
 * The destinations an operator allows although they are not public (CALLBACK_ALLOWED_DESTINATIONS),
 * read by the configuration (src/config.ts) and applied by the outbound guard
 * (src/engine/outbound/outbound-guard.ts).
 */
import ipaddr from 'ipaddr.js';

/** Networks (CIDR) and exact host names an operator allows: `CALLBACK_ALLOWED_DESTINATIONS`. */
export interface AllowedDestinations {
  networks: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
  hosts: ReadonlySet<string>;
}

/**
 * Reads an allow-list: each entry an IP address, a CIDR range or a host name. Throws on an entry
 * that is none of them, so a typo fails the start instead of silently allowing nothing.
 */
export function parseAllowedDestinations(entries: readonly string[]): AllowedDestinations {
  const networks: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  const hosts = new Set<string>();
  for (const raw of entries.map((e) => e.trim()).filter(Boolean)) {
    if (raw.includes('/')) {
      if (!ipaddr.isValidCIDR(raw)) throw new Error(`not a CIDR range: ${raw}`);
      networks.push(ipaddr.parseCIDR(raw));
    } else if (ipaddr.isValid(raw)) {
      const address = ipaddr.parse(raw);
      networks.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(raw)) {
      hosts.add(raw.toLowerCase());
    } else {
      throw new Error(`not an IP address, CIDR range or host name: ${raw}`);
    }
  }
  return { networks, hosts };
}
