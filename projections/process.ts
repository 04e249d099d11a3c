/** The projection runner as a background process of the role: its last pass for /readyz. */
import { gatewayStreamPrefixes } from '../src/domain/events.js';
import type { BackgroundProcess } from '../src/lib/background.js';
import { idleCheck } from '../src/lib/idle-check.js';
import type { EventStore } from '../src/ports/event-store.js';
import type { ProjectionRunner } from './runner.js';

/** The runner is started by the composition root before the server (read-your-writes). */
export function projectionProcess(events: EventStore, runner: ProjectionRunner, clock: () => Date): BackgroundProcess {
  let lastPass: Date | undefined;
  const unsubscribe = runner.onCommit(() => (lastPass = clock()));
  const idle = idleCheck(
    events,
    gatewayStreamPrefixes,
    () => runner.position(),
    () => (lastPass = clock()),
  );
  return {
    name: 'projections',
    lastPass: () => lastPass,
    start: async () => idle.start(),
    async stop() {
      idle.stop();
      unsubscribe();
      await runner.stop();
    },
  };
}
