/**
 * One command handler for task streams: read, fold, decide, append with the expected
 * revision; on a conflict read again and decide again (bounded). A decision of `[]` (already
 * applied) appends nothing, which makes retried commands harmless.
 */
import { streams } from '../domain/events.js';
import { toDomainEvent } from '../domain/recorded.js';
import { decideTask, evolveTask, foldTask, type TaskCommand, type TaskEvent, type TaskState } from '../domain/task.js';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore } from '../ports/event-store.js';
import { toNewEvents } from './append.js';

export interface TaskCommandResult {
  state: TaskState;
  /** Revision of the stream's last event after the command. */
  revision: number;
  events: TaskEvent[];
  position: bigint | undefined;
}

export interface KnownTaskState {
  state: TaskState;
  revision: number;
}

export async function readTask(events: EventStore, taskId: string): Promise<{ state: TaskState; revision: number }> {
  const recorded = await events.readStream(streams.task(taskId));
  const domain = recorded.map(toDomainEvent).filter((e) => e !== undefined);
  return { state: foldTask(domain), revision: recorded.length ? recorded[recorded.length - 1]!.revision : -1 };
}

/**
 * `known` (a state the caller just read or wrote, with its revision) saves the read; when it
 * is stale the append conflicts and the command is decided again on the stream as it is.
 */
export async function executeTask(
  events: EventStore,
  taskId: string,
  command: TaskCommand,
  metadata: EventMetadata,
  known?: KnownTaskState,
): Promise<TaskCommandResult> {
  let current = known;
  for (let attempt = 0; ; attempt++) {
    const { state, revision } = current ?? (await readTask(events, taskId));
    current = undefined;
    const decided = decideTask(command, state);
    if (decided.length === 0) return { state, revision, events: [], position: undefined };
    try {
      const result = await events.append(streams.task(taskId), toNewEvents(decided, metadata), {
        expectedRevision: revision === -1 ? 'no_stream' : revision,
      });
      return { state: decided.reduce(evolveTask, state), revision: result.nextExpectedRevision, events: decided, position: result.position };
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < 5) continue;
      throw err;
    }
  }
}
