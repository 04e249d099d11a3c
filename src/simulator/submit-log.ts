/**
 * What the simulator was asked to do, kept in memory: every submit (every POST to a family's
 * routes) with the gateway's `Idempotency-Key` when it sent one, the prompt's hash and head, the
 * ids the simulator minted for it and the status it answered. Task ids stay stateless
 * (task-id.ts): the log does not decide any answer, it only lets a test count how often the
 * upstream saw a gateway task, and notice a lookup of an id this process never minted (a job
 * this upstream never accepted, e.g. one minted before a restart).
 *
 * Bounded: the newest `limit` submits and minted ids are kept (a long `npm start` must not grow
 * without end); `dropped` says how many submits fell out.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { TaskIdCodec } from './task-id.js';

export type SubmitRecord = {
  /** 1, 2, 3, … in arrival order. */
  seq: number;
  /** Arrival, epoch ms. */
  at: number;
  /** The simulated family whose route answered (its `SimFamily.name`, e.g. `images-async`). */
  family: string;
  /** The route's path below the simulator prefix, e.g. `/v1/images/async/generations`. */
  path: string;
  /** The request's `Idempotency-Key` header (the gateway's task id), when sent. */
  idempotencyKey?: string;
  /** sha256 (hex, 16 chars) of the request's texts (prompt and the like) as the family read them. */
  promptHash?: string;
  /** The first 80 characters of those texts. */
  promptHead?: string;
  /** Ids minted while answering: the task id of an async family, file ids of a sync one. */
  ids: string[];
  /** HTTP status answered; absent while the answer is still being written. */
  status?: number;
};

export type SubmitLogSnapshot = Readonly<{
  submits: readonly SubmitRecord[];
  /** Submits no longer kept (over the limit). */
  dropped: number;
  /** Lookups (polls, file downloads) of well-signed ids this process never minted. */
  foreignLookups: number;
}>;

export type SubmitLog = Readonly<{
  /** Starts a record for a submit that has just arrived; `run` runs its handler in its scope. */
  begin(entry: Pick<SubmitRecord, 'family' | 'path' | 'idempotencyKey' | 'at'>): SubmitRecord;
  /** Runs `fn` with `record` as the submit being answered (ids and texts land in it). */
  within<T>(record: SubmitRecord, fn: () => T): T;
  /** The prompt texts a family read for the submit being answered (http.ts `requestMarkers`). */
  noteTexts(texts: ReadonlyArray<string | null | undefined>): void;
  /** `codec`, with minted ids recorded and lookups of foreign ids counted. */
  recording(codec: TaskIdCodec): TaskIdCodec;
  snapshot(): SubmitLogSnapshot;
}>;

export const SUBMIT_LOG_LIMIT = 20_000;
const PROMPT_HEAD_CHARS = 80;

/** The submit being answered, if any: shared by every log so `noteTexts` needs no request. */
const current = new AsyncLocalStorage<SubmitRecord>();

/** Notes texts on the submit being answered, wherever it is logged (no-op outside a submit). */
export function noteSubmitTexts(texts: ReadonlyArray<string | null | undefined>): void {
  const record = current.getStore();
  if (!record || record.promptHash !== undefined) return;
  const text = texts.filter((t): t is string => typeof t === 'string' && t.length > 0).join('\n');
  if (text.length === 0) return;
  record.promptHash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  record.promptHead = text.slice(0, PROMPT_HEAD_CHARS);
}

export function createSubmitLog(limit = SUBMIT_LOG_LIMIT): SubmitLog {
  const submits: SubmitRecord[] = [];
  let dropped = 0;
  let seq = 0;
  let foreignLookups = 0;
  /** Insertion-ordered, so the oldest go first when over the limit. */
  const minted = new Set<string>();

  return {
    begin(entry) {
      const record: SubmitRecord = { seq: ++seq, ...entry, ids: [] };
      submits.push(record);
      if (submits.length > limit) {
        submits.splice(0, submits.length - limit);
        dropped = seq - limit;
      }
      return record;
    },
    within: (record, fn) => current.run(record, fn),
    noteTexts: noteSubmitTexts,
    recording(codec) {
      return {
        encode(payload) {
          const id = codec.encode(payload);
          current.getStore()?.ids.push(id);
          minted.add(id);
          if (minted.size > limit) minted.delete(minted.values().next().value!);
          return id;
        },
        decode(id, schema) {
          const payload = codec.decode(id, schema);
          if (payload !== undefined && !minted.has(id)) foreignLookups++;
          return payload;
        },
      };
    },
    snapshot: () => ({ submits: submits.map((s) => ({ ...s, ids: [...s.ids] })), dropped, foreignLookups }),
  };
}
