/**
 * A family's task view (docs/adding-a-family.md, step 5): one document a task, under the task's
 * id, created by the family's own TaskSubmitted (another family's task, or a submit seen again,
 * changes nothing) and then folded by the family for the task's later events; an event that
 * comes before its document changes nothing.
 */
import { taskIdOfStream, type EventType } from '../../domain/events.js';
import type { RecordedDomainEvent } from '../../domain/recorded.js';
import type { Projection } from '../../../projections/projection.js';

type Submitted = Extract<RecordedDomainEvent, { type: 'TaskSubmitted' }>;
/** An event after the submit. */
export type TaskViewEvent = Exclude<RecordedDomainEvent, { type: 'TaskSubmitted' }>;

/** What a task view handles unless it says otherwise: the submit, progress, the end and the assets' expiry. */
const TASK_EVENTS: readonly EventType[] = ['TaskSubmitted', 'TaskProgressed', 'TaskSucceeded', 'TaskFailed', 'AssetsExpired'];

export interface TaskViewSpec<Doc> {
  /** The checkpoint's and the view's name. */
  name: string;
  /** The TaskSubmitted family whose tasks the view holds. */
  family: string;
  /** Default: TaskSubmitted, TaskProgressed, TaskSucceeded, TaskFailed and AssetsExpired. */
  handles?: readonly EventType[];
  /** Default: the task of the event's stream. */
  documentId?: (e: RecordedDomainEvent) => string | undefined;
  /** The first document, from the family's TaskSubmitted. */
  submitted(e: Submitted): Doc;
  /** A later event folded into the task's document; `undefined`: no change. */
  evolve(doc: Doc, e: TaskViewEvent): Doc | undefined;
}

export function taskView<Doc>(spec: TaskViewSpec<Doc>): Projection<Doc> {
  return {
    name: spec.name,
    view: spec.name,
    handles: spec.handles ?? TASK_EVENTS,
    documentId: spec.documentId ?? ((e) => taskIdOfStream(e.streamName)),
    evolve(doc, e) {
      if (e.type === 'TaskSubmitted') return doc || e.data.family !== spec.family ? undefined : spec.submitted(e);
      return doc ? spec.evolve(doc, e) : undefined;
    },
  };
}
