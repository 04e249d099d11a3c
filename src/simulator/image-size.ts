/**
 * Pixel size of a simulated image from a request's `size`: `1024x1024` (separators `x`, `X`,
 * `×`, `*`), an aspect ratio such as `16:9` (longer side 1024), a preset `1K`/`1.5K`/`2K`/…
 * (square), or `auto`/nothing (1024×1024). Each side is capped at 4096; anything unreadable
 * falls back to the default, since validating sizes is the gateway's job, not the upstream's.
 */
import { MAX_IMAGE_SIDE } from './media.js';

export type PixelSize = Readonly<{ width: number; height: number }>;

export const DEFAULT_IMAGE_SIZE: PixelSize = { width: 1024, height: 1024 };
const RATIO_LONG_SIDE = 1024;

export function parseImageSize(size: string | null | undefined): PixelSize {
  const text = (size ?? '').trim();
  const dims = /^(\d+)\s*[xX×*]\s*(\d+)$/.exec(text);
  if (dims) return capped(Number(dims[1]), Number(dims[2]));
  const ratio = /^(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)$/.exec(text);
  if (ratio) {
    const a = Number(ratio[1]);
    const b = Number(ratio[2]);
    if (a > 0 && b > 0) {
      return a >= b ? capped(RATIO_LONG_SIDE, (RATIO_LONG_SIDE * b) / a) : capped((RATIO_LONG_SIDE * a) / b, RATIO_LONG_SIDE);
    }
  }
  const preset = /^(\d+(?:\.\d+)?)k$/i.exec(text);
  if (preset) {
    const side = Number(preset[1]) * 1024;
    return capped(side, side);
  }
  return DEFAULT_IMAGE_SIZE;
}

function capped(width: number, height: number): PixelSize {
  if (!(width > 0 && height > 0)) return DEFAULT_IMAGE_SIZE;
  const side = (v: number): number => Math.min(MAX_IMAGE_SIDE, Math.max(1, Math.round(v)));
  return { width: side(width), height: side(height) };
}
