/**
 * Idempotent submits (`Idempotency-Key`, shared by every family's submit route): the first
 * request with a key claims it on the stream `idem-<sha256(token id, key)>` (appended with
 * "no stream", so concurrent requests elect one winner); a retry with the same body within
 * 24 hours gets the same task back and is not charged again; another body is refused (409).
 */
import { createHash } from 'node:crypto';
import { streams, type EventDataOf } from '../domain/events.js';
import { newId } from '../domain/ids.js';
import { toDomainEvent } from '../domain/recorded.js';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore } from '../ports/event-store.js';
import { GatewayError } from '../http/errors.js';
import { appendEvents } from './append.js';
import type { SubmittedTask } from './submit.js';

const WINDOW_MS = 24 * 3600 * 1000;
const MAX_KEY_LENGTH = 255;
const WAIT_FOR_WINNER_MS = 10_000;

type TaskData = EventDataOf<'TaskSubmitted'>;

export interface IdempotentOutcome {
  task: TaskData;
  /** True when this request was answered from an earlier one. */
  replayed: boolean;
}

/** JSON with object keys sorted, so the same body hashes the same whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface ClaimState {
  revision: number;
  claim?: { taskId: string; requestHash: string; at: number; released: boolean };
}

async function readClaim(events: EventStore, stream: string): Promise<ClaimState> {
  const recorded = await events.readStream(stream);
  let claim: ClaimState['claim'];
  for (const raw of recorded) {
    const e = toDomainEvent(raw);
    if (e?.type === 'IdempotencyKeyClaimed') claim = { taskId: e.data.taskId, requestHash: e.data.requestHash, at: Date.parse(e.metadata.at), released: false };
    if (e?.type === 'IdempotencyKeyReleased' && claim?.taskId === e.data.taskId) claim.released = true;
  }
  return { revision: recorded.length ? recorded[recorded.length - 1]!.revision : -1, ...(claim ? { claim } : {}) };
}

async function submittedTask(events: EventStore, taskId: string): Promise<TaskData | undefined> {
  const [first] = await events.readStream(streams.task(taskId), { maxCount: 1 });
  const e = first ? toDomainEvent(first) : undefined;
  return e?.type === 'TaskSubmitted' ? e.data : undefined;
}

export async function submitIdempotently(
  deps: { events: EventStore; clock: () => Date },
  input: { key: string | undefined; tokenId: string; body: unknown; metadata: EventMetadata },
  submit: (taskId: string) => Promise<SubmittedTask>,
): Promise<IdempotentOutcome> {
  if (input.key === undefined) return { task: (await submit(newId('task'))).data, replayed: false };
  if (input.key.length === 0 || input.key.length > MAX_KEY_LENGTH) {
    throw new GatewayError(400, 'invalid_request', `Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} characters`, 'Idempotency-Key');
  }
  const stream = streams.idempotency(sha256(`${input.tokenId}\n${input.key}`));
  const requestHash = sha256(canonical(input.body));
  const deadline = Date.now() + WAIT_FOR_WINNER_MS;

  for (;;) {
    const { revision, claim } = await readClaim(deps.events, stream);
    const now = deps.clock().getTime();
    if (!claim || claim.released || now - claim.at > WINDOW_MS) {
      const taskId = newId('task');
      try {
        await appendEvents(deps.events, stream, [{ type: 'IdempotencyKeyClaimed', data: { taskId, requestHash, tokenId: input.tokenId } }], {
          expectedRevision: revision === -1 ? 'no_stream' : revision,
          metadata: input.metadata,
        });
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError) continue; // another request claimed it first
        throw err;
      }
      try {
        return { task: (await submit(taskId)).data, replayed: false };
      } catch (err) {
        await appendEvents(deps.events, stream, [{ type: 'IdempotencyKeyReleased', data: { taskId, reason: err instanceof Error ? err.message.slice(0, 200) : 'failed' } }], {
          expectedRevision: 'any',
          metadata: input.metadata,
        }).catch(() => undefined);
        throw err;
      }
    }
    if (claim.requestHash !== requestHash) {
      throw new GatewayError(409, 'idempotency_key_reused', 'Idempotency-Key: this key was used with a different request body', 'Idempotency-Key');
    }
    const task = await submittedTask(deps.events, claim.taskId);
    if (task) return { task, replayed: true };
    if (Date.now() > deadline) {
      throw new GatewayError(409, 'idempotency_key_in_progress', 'Idempotency-Key: the first request with this key is still being processed', 'Idempotency-Key');
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
