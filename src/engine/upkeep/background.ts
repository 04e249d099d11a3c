/**
 * Moved to src/lib/background.ts, where the projections may import it too. This re-export is
 * kept only for dispatch/task-engine.ts, which another branch is changing at the same time:
 * once that branch is merged, point its import at src/lib/background.ts and delete this file.
 */
export { startAll, stopAll, statusOf, type BackgroundProcess, type ProcessStatus } from '../../lib/background.js';
