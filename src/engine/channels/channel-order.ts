import type { ChannelDoc } from '../../../projections/channels.js';

/**
 * The order in which channels are tried: higher priority first; within one priority a
 * weighted random order (Efraimidis–Spirakis: key = u^(1/weight)), so traffic splits by weight.
 */
export function orderChannels(channels: readonly ChannelDoc[], random: () => number = Math.random): ChannelDoc[] {
  const keyed = channels.map((c) => ({ c, key: c.weight > 0 ? random() ** (1 / c.weight) : -1 }));
  keyed.sort((a, b) => b.c.priority - a.c.priority || b.key - a.key);
  return keyed.map((k) => k.c);
}
