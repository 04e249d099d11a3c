/**
 * What the four video families (vidgen, Vid-H3, clip, motion) share beyond the kit's field
 * readers: the plan their rules produce (seconds × tier) and the succeeded status their upstream
 * adapters report (seconds and resolution delivered).
 */
import type { UpstreamAdapter, UpstreamStatus } from '../../engine/channels/upstream.js';
import type { PlanResult } from './plan.js';
import type { TaskPlan } from './submit.js';

/** What a video request becomes: reservation inputs (seconds × tier) and the upstream body. */
export interface VideoPlan extends TaskPlan {
  /** Seconds the reservation is quoted on. */
  units: number;
  /** Resolution (or clip mode) the reservation is quoted on. */
  tier: string;
}

export type VideoPlanResult = PlanResult<VideoPlan>;

// ---- upstream adapters -----------------------------------------------------------------------

/** What every video adapter declares alike: results as URLs; video generation takes minutes, so poll gently and give up after two hours. */
export const VIDEO_UPSTREAM: Pick<UpstreamAdapter, 'delivery' | 'pollIntervalMs' | 'maxAgeSeconds'> = {
  delivery: () => 'url',
  pollIntervalMs: 5_000,
  maxAgeSeconds: 2 * 3600,
};

/** A finite non-negative number from a number or numeric string the upstream reported. */
export function reportedNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * The succeeded status of a video task: one video and the usage settlement charges — the
 * seconds and tier the upstream reports delivering, else what was reserved (the settler keeps
 * the reserved tier when `tier` is absent).
 */
export function videoSucceeded(
  video: { url: string; withChannelKey?: boolean } | { b64: string },
  delivered: { seconds: number | undefined; tier: string | undefined },
  reservedSeconds: number,
  snapshot?: Record<string, unknown>,
): UpstreamStatus {
  const seconds = delivered.seconds ?? reservedSeconds;
  return {
    state: 'succeeded',
    results: [{ kind: 'video', contentType: 'video/mp4', durationSeconds: seconds, ...video }],
    usage: { units: seconds, ...(delivered.tier !== undefined ? { tier: delivered.tier } : {}) },
    ...(snapshot ? { snapshot } : {}),
  };
}

/** The tier name the upstream reported, matched case-insensitively against the family's tiers. */
export function knownTier(reported: unknown, tiers: readonly string[]): string | undefined {
  if (typeof reported !== 'string') return undefined;
  return tiers.find((t) => t.toLowerCase() === reported.trim().toLowerCase());
}
