/** What the `tune` request rules decide (spec 4.11). Refusals name the field first (`<field>: …`). */
import type { PlanResult } from '../kit/plan.js';

export type TuneAction = 'LYRICS' | 'MUSIC';

export interface TunePlan {
  action: TuneAction;
  /** Billing model: one request of `tune_lyrics` or `tune_music`. */
  model: 'tune_lyrics' | 'tune_music';
  units: 1;
  /** The upstream body: known fields only, defaults applied. */
  upstream: Record<string, unknown>;
  /** Completion callback (`hookUrl` for lyrics, `callback_url` for music). */
  callbackUrl?: string;
}

export type TunePlanResult = PlanResult<TunePlan>;
