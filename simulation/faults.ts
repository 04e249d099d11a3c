/** The faults a run may inject, each with its chance, and the count of each one injected. */
export interface FaultRates {
  /** An append that fails before anything is written (a connection lost on the way). */
  appendFailsBeforeCommit: number;
  /** An append that is written but whose answer is lost (the caller sees an error). */
  appendAmbiguous: number;
  /** A read that fails (the store did not answer). */
  readFails: number;
  /** Per simulated second: a process is killed (and restarted after a while). */
  crashPerSecond: number;
  /** Per simulated second: a process is paused for longer than any lease. */
  pausePerSecond: number;
  /**
   * An engine frozen while its submit call is with the vendor, until about when another engine
   * takes its lease over: the pause the submit lease's fence is for, sought out rather than
   * waited for (as FoundationDB's BUGGIFY seeks out the rare paths).
   */
  pauseMidSubmit: number;
  /** Per simulated second: partitions move between the engine processes (a rebalance). */
  rebalancePerSecond: number;
  /** Per simulated second: the projector stops for a while (projector lag). */
  projectorStallPerSecond: number;
  /** A bus message delivered again after it was handled (at least once). */
  busDuplicate: number;
  /** A bus message delivered after the one behind it. */
  busReorder: number;
  /** Upstream: a submit accepted whose answer never comes back (the call times out). */
  upstreamAcceptThenTimeout: number;
  /** Upstream: a submit refused with a passing error (nothing created). */
  upstreamSubmitFails: number;
  /** Upstream: a poll that fails with a passing error. */
  upstreamPollFails: number;
  /** Upstream: a task it forgets (answers "lost" from then on). */
  upstreamLosesTask: number;
  /** Upstream: a task that fails upstream. */
  upstreamTaskFails: number;
  /** Upstream: a task that returns more results than asked. */
  upstreamOverDelivers: number;
  /** Upstream: a task whose results cannot be fetched once (vanish, then come back). */
  upstreamResultsVanish: number;
  /** Upstream: an answer that comes long after it was asked (minutes). */
  upstreamAnswersLate: number;
  /** Upstream: a task that takes longer than its deadline. */
  upstreamNeverFinishes: number;
  /** Callback receiver: an answer other than 2xx. */
  receiverFails: number;
  /** Largest clock skew between processes, milliseconds either way. */
  maxClockSkewMs: number;
}

export const NO_FAULTS: FaultRates = {
  appendFailsBeforeCommit: 0,
  appendAmbiguous: 0,
  readFails: 0,
  crashPerSecond: 0,
  pausePerSecond: 0,
  pauseMidSubmit: 0,
  rebalancePerSecond: 0,
  projectorStallPerSecond: 0,
  busDuplicate: 0,
  busReorder: 0,
  upstreamAcceptThenTimeout: 0,
  upstreamSubmitFails: 0,
  upstreamPollFails: 0,
  upstreamLosesTask: 0,
  upstreamTaskFails: 0,
  upstreamOverDelivers: 0,
  upstreamResultsVanish: 0,
  upstreamAnswersLate: 0,
  upstreamNeverFinishes: 0,
  receiverFails: 0,
  maxClockSkewMs: 0,
};

/** Every fault kind on, at rates that leave most tasks to finish. */
export const ALL_FAULTS: FaultRates = {
  appendFailsBeforeCommit: 0.01,
  appendAmbiguous: 0.01,
  readFails: 0.002,
  crashPerSecond: 0.02,
  pausePerSecond: 0.04,
  pauseMidSubmit: 0.01,
  rebalancePerSecond: 0.03,
  projectorStallPerSecond: 0.02,
  busDuplicate: 0.05,
  busReorder: 0.02,
  upstreamAcceptThenTimeout: 0.02,
  upstreamSubmitFails: 0.03,
  upstreamPollFails: 0.05,
  upstreamLosesTask: 0.01,
  upstreamTaskFails: 0.03,
  upstreamOverDelivers: 0.03,
  upstreamResultsVanish: 0.02,
  upstreamAnswersLate: 0.02,
  upstreamNeverFinishes: 0.005,
  receiverFails: 0.1,
  maxClockSkewMs: 5_000,
};

/** Faults injected so far, by kind. */
export class FaultCounts {
  readonly counts = new Map<string, number>();
  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }
}
