/** IP allow-lists with Node's own BlockList (addresses and CIDR ranges, v4 and v6). */
import { BlockList, isIP } from 'node:net';

/** Parses `1.2.3.4`, `10.0.0.0/8`, `::1`, `fd00::/8`; undefined when not an address or range. */
function parseEntry(entry: string): { address: string; prefix?: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = entry.trim().split('/');
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { address, family };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family };
}

export const isValidAllowEntry = (entry: string): boolean => parseEntry(entry) !== undefined;

export function buildAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    if (!parsed) continue;
    if (parsed.prefix === undefined) list.addAddress(parsed.address, parsed.family);
    else list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return list;
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is checked as the IPv4 address it carries. */
export function allows(list: BlockList, ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped?.[1] ?? ip;
  const version = isIP(address);
  if (version === 0) return false;
  return list.check(address, version === 4 ? 'ipv4' : 'ipv6');
}
