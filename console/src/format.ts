/** How figures read in the console: quota units grouped by thousands, times in the reader's zone. */

const units = new Intl.NumberFormat('en-US');

export const quota = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : units.format(n));

export const signed = (n: number): string => (n > 0 ? `+${units.format(n)}` : n < 0 ? `−${units.format(-n)}` : '0');

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString();
}

/** Unix seconds (token expiry, creation), −1 meaning never. */
export const unixTime = (seconds: number): string => (seconds < 0 ? 'never' : new Date(seconds * 1000).toLocaleString());

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const mib = n / (1024 * 1024);
  return mib < 1 ? `${(n / 1024).toFixed(1)} KiB` : `${mib.toFixed(1)} MiB`;
}

export const ms = (n: number | null): string => (n === null ? '—' : n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`);
