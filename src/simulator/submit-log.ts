/**
 * What the simulator was asked to do, kept in memory: every submit (every POST to a family's
 * routes) with the gateway's `Idempotency-Key` when it sent one, the prompt's hash and head, the
 * ids the simulator minted for it and the status it answered. Task ids stay stateless
 * (task-id.ts): the log decides no answer, it only lets a test count how often the upstream saw
 * a gateway task, and notice a lookup of an id this process never minted (a job this upstream
 * never accepted, e.g. one minted before a restart).
 *
 * No AsyncLocalStorage: on Node 20 one turns on promise hooks for the whole process, which is
 * the gateway's own when the simulator is mounted in it. Texts are noted per request object
 * (`noteSubmitTexts`), ids read from the answer.
 *
 * Bounded: the newest `limit` submits and minted ids are kept (a long `npm start` must not grow
 * without end); `dropped` says how many submits fell out.
 */
import { createHash } from 'node:crypto';
import { SIM_ID_PREFIX, type TaskIdCodec } from './task-id.js';

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
  /**
   * Ids minted for it, as its answer names them: the task id of an async family, file ids of a
   * sync one (none when the results are inline or streamed).
   */
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
  /** Starts the record of a submit that has just arrived. */
  begin(entry: Pick<SubmitRecord, 'family' | 'path' | 'idempotencyKey' | 'at'>): SubmitRecord;
  /** The answer's body, as sent: the ids it names were minted for `record`. */
  answered(record: SubmitRecord, body: string): void;
  /** The answer is out: its status, and the texts the family read for `request`. */
  finished(record: SubmitRecord, request: object, status: number): void;
  /** `codec`, counting lookups of ids it never minted. */
  recording(codec: TaskIdCodec): TaskIdCodec;
  snapshot(): SubmitLogSnapshot;
}>;

export const SUBMIT_LOG_LIMIT = 20_000;
const PROMPT_HEAD_CHARS = 80;
/** A simulator id as it appears in an answer (alone, or inside a file URL). */
const SIM_ID_PATTERN = new RegExp(`${SIM_ID_PREFIX}[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+`, 'g');

/** Texts each request's family read (http.ts `requestMarkers`), until the request is gone. */
const textsOf = new WeakMap<object, string[]>();

/** Notes the texts (prompt and the like) a family read from `request`. */
export function noteSubmitTexts(request: object, texts: ReadonlyArray<string | null | undefined>): void {
  const found = texts.filter((t): t is string => typeof t === 'string' && t.length > 0);
  if (found.length > 0) textsOf.set(request, [...(textsOf.get(request) ?? []), ...found]);
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
    answered(record, body) {
      for (const [id] of body.matchAll(SIM_ID_PATTERN)) {
        if (record.ids.includes(id)) continue;
        record.ids.push(id);
        minted.add(id);
        if (minted.size > limit) minted.delete(minted.values().next().value!);
      }
    },
    finished(record, request, status) {
      record.status = status;
      const text = (textsOf.get(request) ?? []).join('\n');
      if (text.length === 0) return;
      record.promptHash = createHash('sha256').update(text).digest('hex').slice(0, 16);
      record.promptHead = text.slice(0, PROMPT_HEAD_CHARS);
    },
    recording(codec) {
      return {
        encode: (payload) => codec.encode(payload),
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
