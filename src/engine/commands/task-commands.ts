/**
 * Commands on task streams, through the one command handler (command-handler.ts): read, fold,
 * decide, append with the expected revision; on a conflict read again and decide again
 * (bounded). A decision of `[]` (already applied) appends nothing, which makes retried
 * commands harmless.
 */
import { streams } from '../../domain/events.js';
import { toDomainEvent, type RecordedDomainEvent } from '../../domain/recorded.js';
import { taskDecider, type TaskCommand, type TaskEvent, type TaskState } from '../../domain/task.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { executeCommand, readState, type CommandResult, type KnownState, type StreamCommand } from './command-handler.js';

export type KnownTaskState = KnownState<TaskState>;

/** The task's TaskSubmitted (the first event of its stream); undefined while the task does not exist. */
export async function readSubmitted(events: EventStore, taskId: string): Promise<Extract<RecordedDomainEvent, { type: 'TaskSubmitted' }> | undefined> {
  const [first] = await events.readStream(streams.task(taskId), { maxCount: 1 });
  const event = first ? toDomainEvent(first) : undefined;
  return event?.type === 'TaskSubmitted' ? event : undefined;
}

export async function readTask(events: EventStore, taskId: string): Promise<KnownTaskState> {
  return readState(events, streams.task(taskId), taskDecider);
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
  onAppend?: StreamCommand<TaskState, TaskCommand, TaskEvent>['onAppend'],
): Promise<CommandResult<TaskState, TaskEvent>> {
  return executeCommand({ events, stream: streams.task(taskId), decider: taskDecider, command, metadata, known, ...(onAppend ? { onAppend } : {}) });
}
