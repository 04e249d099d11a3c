/**
 * Idempotent submits (`Idempotency-Key`, shared by every family's submit route).
 *
 * The task id is derived from the token, the key and a generation number, so every request
 * with the same key goes for the same task, and the streams themselves elect one:
 * - the reservation id derives from the task id, so a second reservation for it is absorbed
 *   by the account aggregate (one hold, one charge);
 * - the task stream is opened with "no stream", so one TaskSubmitted wins and the others
 *   answer it.
 * Nothing is written before the submit's own appends: a request refused for its body, its
 * quota or its model appends nothing. A request killed between its reservation and its task is
 * finished by the retry (the same ids). A generation is left behind for the next when its task
 * is older than the 24-hour window, or when its reservation was closed without a task (the
 * reconciler released an orphan): the key then starts afresh.
 * The body is compared by a hash of its canonical JSON, recorded with the task: a retry with
 * the same body answers the same task and charges nothing; another body is refused (409).
 */
import { createHash } from 'node:crypto';
import type { EventDataOf } from '../../domain/events.js';
import { newTaskId } from '../../domain/ids.js';
import type { EventMetadata, EventStore } from '../../ports/event-store.js';
import { isRefusal, Refusal } from '../../domain/refusal.js';
import type { SubmittedTask } from './submit.js';
import { readSubmitted } from '../commands/task-commands.js';

const WINDOW_MS = 24 * 3600 * 1000;
const MAX_KEY_LENGTH = 255;
/** Generations one key may go through (a key reused daily for years still fits). */
const MAX_GENERATIONS = 10_000;

type TaskData = EventDataOf<'TaskSubmitted'>;

export interface IdempotentOutcome {
  task: TaskData;
  /** True when this request was answered from an earlier one. */
  replayed: boolean;
}

/** What the submit records so a later request with the same key can be matched. */
export interface SubmitIds {
  taskId: string;
  idempotencyKey?: string;
  requestHash?: string;
}

/**
 * JSON with object keys sorted, so the same body hashes the same whatever its key order.
 * Iterative (an explicit stack), so a deeply nested body cannot overflow the call stack.
 */
function canonical(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or literal text (brackets, commas, keys) already decided.
  const stack: Array<{ value: unknown } | string> = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const v = item.value;
    if (Array.isArray(v)) {
      stack.push(']');
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] });
        if (i > 0) stack.push(',');
      }
      stack.push('[');
    } else if (v && typeof v === 'object') {
      const keys = Object.keys(v).sort();
      stack.push('}');
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push({ value: (v as Record<string, unknown>)[keys[i]!] });
        stack.push(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`);
      }
      stack.push('{');
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  }
  return out.join('');
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The task id of one generation of a key: `task_` and 24 base62 characters, like a random id. */
export function idempotentTaskId(tokenId: string, key: string, generation: number): string {
  const digest = createHash('sha256').update(`${tokenId}\n${key}\n${generation}`).digest();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let n = BigInt(`0x${digest.toString('hex')}`);
  let id = '';
  for (let i = 0; i < 24; i++) {
    id += alphabet[Number(n % 62n)];
    n /= 62n;
  }
  return `task_${id}`;
}

export async function submitIdempotently(
  deps: { events: EventStore; clock: () => Date },
  input: { key: string | undefined; tokenId: string; body: unknown; metadata: EventMetadata },
  submit: (ids: SubmitIds) => Promise<SubmittedTask>,
): Promise<IdempotentOutcome> {
  if (input.key === undefined) return { task: (await submit({ taskId: newTaskId() })).data, replayed: false };
  const key = input.key;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new Refusal('invalid', 'invalid_request', `Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} characters`, 'Idempotency-Key');
  }
  const requestHash = sha256(canonical(input.body));
  const answer = (task: TaskData, replayed: boolean): IdempotentOutcome => {
    if (task.requestHash !== requestHash) {
      throw new Refusal('conflict', 'idempotency_key_reused', 'Idempotency-Key: this key was used with a different request body', 'Idempotency-Key');
    }
    return { task, replayed };
  };

  for (let generation = 0; generation < MAX_GENERATIONS; generation++) {
    const taskId = idempotentTaskId(input.tokenId, key, generation);
    const existing = (await readSubmitted(deps.events, taskId))?.data;
    if (existing) {
      if (deps.clock().getTime() - existing.createdAt * 1000 > WINDOW_MS) continue; // past the window: a new generation
      return answer(existing, true);
    }
    try {
      const submitted = await submit({ taskId, idempotencyKey: key, requestHash });
      // Another request with this key may have opened the task first: its body decides.
      return answer(submitted.data, !submitted.opened);
    } catch (err) {
      if (isRefusal(err, 'reservation_closed')) {
        // The reservation was settled or released; the task may exist by now, or never will.
        const now = (await readSubmitted(deps.events, taskId))?.data;
        if (now) return answer(now, true);
        continue;
      }
      if (!isRefusal(err, 'reservation_amount_differs')) throw err;
      // Another request with this key holds a reservation of another amount and has not opened
      // the task yet (another body, or prices changed between the two).
      throw new Refusal('conflict', 'idempotency_key_in_progress', 'Idempotency-Key: another request with this key is being processed', 'Idempotency-Key');
    }
  }
  throw new Refusal('conflict', 'idempotency_key_reused', 'Idempotency-Key: this key has been used too many times', 'Idempotency-Key');
}
