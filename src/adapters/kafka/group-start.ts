/**
 * Fixes where a consumer group with no committed offset starts: the current end of each such
 * partition, committed for the group before any member of it consumes, so every member (and
 * every later owner of a partition) starts there, never at a later "latest".
 *
 * This is kafkajs's `admin.setOffsets` (a short-lived member joins the empty group, seeks, and
 * its seeks are committed on its first fetch), with one difference found on a real broker:
 * setOffsets's member waits kafkajs's default `maxWaitTimeInMs` (5 s) on its paused first fetch
 * before it stops, so every new group took more than 5 s to start. Here that wait is 50 ms.
 */
import type { Admin, Kafka } from 'kafkajs';

/** States of a group that has no running member (kafkajs's own test in setOffsets). */
const NO_MEMBERS = new Set(['Empty', 'Dead']);

/**
 * Retriable broker answers are retried with backoff until `timeoutMs`: on a broker's first
 * group operation (a fresh `docker compose up`) the group coordinator is "not available" or
 * "loading" while `__consumer_offsets` is created, and kafkajs's admin `fetchOffsets` does not
 * retry that itself, so the process failed to start. Every step here can be repeated.
 */
export async function fixGroupStartAtEnd(kafka: Kafka, admin: Admin, groupId: string, topic: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fixOnce(kafka, admin, groupId, topic, timeoutMs);
    } catch (error) {
      if (!isRetriable(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** attempt)));
    }
  }
}

/** kafkajs's errors say whether a retry may succeed (`retriable`); the classes are not ESM exports. */
function isRetriable(error: unknown): boolean {
  return error instanceof Error && (error as { retriable?: unknown }).retriable === true;
}

async function fixOnce(kafka: Kafka, admin: Admin, groupId: string, topic: string, timeoutMs: number): Promise<void> {
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  const missing = (committed?.partitions ?? []).filter((p) => Number(p.offset) < 0).map((p) => p.partition);
  if (missing.length === 0) return;
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p.high]));

  const setter = kafka.consumer({ groupId, maxWaitTimeInMs: 50, allowAutoTopicCreation: false });
  let timer: NodeJS.Timeout | undefined;
  try {
    await setter.connect();
    await setter.subscribe({ topics: [topic], fromBeginning: true });
    // A running member means another instance started the group first: it owns the start.
    if (!NO_MEMBERS.has((await setter.describeGroup()).state)) return;
    await new Promise<void>((resolve, reject) => {
      let stopping = false;
      timer = setTimeout(() => reject(new Error(`fixing the start of group ${groupId} took over ${timeoutMs} ms`)), timeoutMs);
      setter.on(setter.events.FETCH, () => {
        if (stopping) return;
        stopping = true;
        setter.stop().then(resolve, reject);
      });
      setter.on(setter.events.CRASH, ({ payload }) => {
        if (!payload.restart) reject(payload.error);
      });
      setter.run({ eachBatchAutoResolve: false, eachBatch: async () => undefined }).catch(reject);
      setter.pause([{ topic }]);
      for (const partition of missing) setter.seek({ topic, partition, offset: ends.get(partition) ?? '0' });
    });
  } finally {
    clearTimeout(timer);
    await setter.disconnect();
  }
}
