/**
 * The order CI runs the test files in: the longest known first, so that they overlap with the
 * rest instead of running alone at the end. On a fresh checkout vitest has no durations and runs
 * larger files first: the simulation slice (a small file, 6 to 13 minutes of work) came last and
 * ran alone, and CI took more than 30 minutes. After these, vitest's own order.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Slowest first, as CI measured them (seconds in a clean-clone run, session 38). */
const LONGEST = [
  'test/simulation/simulation.e2e.test.ts', // 6-13 min
  'test/reliability/rebalance-under-load.e2e.test.ts', // 170 s
  'test/reliability/kill-cycles.e2e.test.ts', // 150 s
  'test/bench/bench-quick.e2e.test.ts', // 136 s
  'test/reliability/split-roles.postgres.e2e.test.ts', // 128 s
  'test/reliability/split-roles.e2e.test.ts', // 87 s
];

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONGEST.indexOf(relative(process.cwd(), spec.moduleId).split('\\').join('/'));
      return i < 0 ? LONGEST.length : i;
    };
    // Stable: the rest keep vitest's order.
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
