/**
 * A task's stored inputs (inline-inputs.ts) are deleted when the task ends, succeeded or
 * failed: the upstream has had them, and nothing sends them again (a retry with the same
 * Idempotency-Key answers the recorded task; a CHANGE sends the upstream job id, not inputs).
 * Run by the settler on the same TaskSucceeded / TaskFailed, so at least once per task, and
 * deleting a missing key is not an error.
 */
import type { RecordedDomainEvent } from '../../domain/recorded.js';
import { taskIdOfStream } from '../../domain/events.js';
import type { AssetStore } from '../../ports/asset-store.js';
import type { EventStore } from '../../ports/event-store.js';
import { inputKeysOf } from '../media/inline-inputs.js';
import { readSubmitted } from '../commands/task-commands.js';

export async function deleteInputsOfEndedTask(deps: { events: EventStore; assets: AssetStore }, event: RecordedDomainEvent): Promise<void> {
  if (event.type !== 'TaskSucceeded' && event.type !== 'TaskFailed') return;
  const taskId = taskIdOfStream(event.streamName);
  const submitted = await readSubmitted(deps.events, taskId);
  if (submitted) await Promise.all(inputKeysOf(taskId, submitted.data.request).map((key) => deps.assets.delete(key)));
}
