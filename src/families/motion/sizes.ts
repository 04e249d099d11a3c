/**
 * Resolution tiers of the motion family (480P, 720P, 1080P) and the tier a pixel size falls in:
 * the smallest tier whose 16:9 area holds it, so the upstream's own sizes land where it bills
 * them (832*480 and 624*624 → 480P; 1280*720, 960*960, 1088*832 → 720P; 1920*1080,
 * 1440*1440 → 1080P). Pure; the simulator uses it too, so both sides agree.
 */
export const MOTION_TIERS = ['480P', '720P', '1080P'] as const;
export type MotionTier = (typeof MOTION_TIERS)[number];

const TIER_AREAS: ReadonlyArray<readonly [MotionTier, number]> = [
  ['480P', 832 * 480],
  ['720P', 1280 * 720],
  ['1080P', 1920 * 1080],
];

/** `1280*720` (also `x`, `X`, `×`) as width and height. */
export function parseMotionSize(text: string): { width: number; height: number } | undefined {
  const match = /^\s*([1-9]\d{1,4})\s*[*xX×]\s*([1-9]\d{1,4})\s*$/.exec(text);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

export function tierName(text: string): MotionTier | undefined {
  const upper = text.trim().toUpperCase();
  return MOTION_TIERS.find((t) => t === upper);
}

/** The tier of a pixel size, or undefined when it is larger than 1080P. */
export function tierOfPixels(width: number, height: number): MotionTier | undefined {
  return TIER_AREAS.find(([, area]) => width * height <= area)?.[0];
}
