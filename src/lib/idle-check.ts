/**
 * For subscription-driven processes: a cheap periodic look at whether anything of theirs is
 * pending. "Nothing after my position" counts as a successful pass, so an idle but current
 * process shows a fresh pass, and one stuck behind pending events does not.
 */

/**
 * What the check reads: any log of events by position, the event store port (src/ports/) among
 * them. Named here rather than imported, so helpers of the ground floor depend on nothing above it.
 */
export interface PositionedLog {
  readAll(options: { after: bigint; maxCount: number; streamPrefixes: readonly string[] }): Promise<readonly unknown[]>;
}

export function idleCheck(
  events: PositionedLog,
  streamPrefixes: readonly string[],
  position: () => bigint,
  onCurrent: () => void,
  everyMs = 2000,
): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    const [next] = await events.readAll({ after: position(), maxCount: 1, streamPrefixes });
    if (!next) onCurrent();
  };
  return {
    start() {
      void check().catch(() => undefined);
      timer = setInterval(() => void check().catch(() => undefined), everyMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
