/**
 * Bus port: topics of keyed messages, consumer groups with resumable offsets, at-least-once.
 * A message's key picks its partition, so messages with one key keep their order.
 */
export interface BusMessage {
  /** Dedup id: consumers ignore an id they have already processed. */
  id: string;
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface DeliveredMessage extends BusMessage {
  topic: string;
  partition: number;
  offset: bigint;
}

export interface ConsumerOptions {
  topic: string;
  groupId: string;
  /** Called for each message in partition order; the offset is committed after it resolves. */
  handle(message: DeliveredMessage): Promise<void>;
  /** Partitions this member now owns / no longer owns (work ownership follows them). */
  onAssign?(partitions: readonly number[]): void | Promise<void>;
  onRevoke?(partitions: readonly number[]): void | Promise<void>;
  /** Where a group with no committed offset starts. Default 'earliest'. */
  fromBeginning?: boolean;
  /**
   * How long a member that died without leaving keeps its partitions (ms), where the bus learns
   * of deaths by sessions (Kafka); the bus's own setting when absent. Shorter moves a dead
   * member's work sooner, at the risk of dropping a live member whose process stalls that long.
   */
  sessionTimeoutMs?: number;
  /**
   * When the group rebalances, only the partitions that move are revoked and assigned: this
   * member goes on with the ones it keeps throughout. Where the bus's protocol takes every
   * partition back at a rebalance (Kafka through kafkajs, eager), the member holds them from the
   * rebalance's start until the new assignment arrives (at most the rebalance timeout), so a
   * partition that moves may have two owners for that moment. For work that is fenced otherwise
   * (the engine's claims) or where an overlap is harmless (projections); default false: every
   * partition is revoked when a rebalance starts, before anyone else can be given it.
   */
  incrementalRebalance?: boolean;
}

export interface Consumer {
  close(): Promise<void>;
}

export interface Bus {
  readonly partitions: number;
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  consume(options: ConsumerOptions): Promise<Consumer>;
  /** Partition of a key, the same function for every adapter (murmur2 like Kafka's default). */
  partitionOf(key: string): number;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The checks every adapter makes alike, with the same messages. */
export function requireNonEmpty(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${what} must be a non-empty string`);
  return value;
}

export function requirePartitionCount(partitions: number): void {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
}

/** `reservedHeader`: a header name the adapter keeps for the message id. */
export function checkMessage(m: BusMessage, reservedHeader?: string): void {
  requireNonEmpty(m.id, 'message id');
  if (typeof m.key !== 'string') throw new TypeError('message key must be a string');
  if (typeof m.value !== 'string') throw new TypeError('message value must be a string');
  for (const [name, value] of Object.entries(m.headers ?? {})) {
    if (typeof value !== 'string') throw new TypeError(`message header ${name} must be a string`);
    if (name === reservedHeader) throw new TypeError(`message header ${name} is reserved for the message id`);
  }
}

/** The groupId and handler of consume() (each adapter checks the topic its own way first). */
export function checkConsumer(options: ConsumerOptions): void {
  requireNonEmpty(options.groupId, 'groupId');
  if (typeof options.handle !== 'function') throw new TypeError('handle must be a function');
}

/** Runs a rebalance listener; its failure must not stop ownership changing (the port has no error channel for it). */
export async function notifyListener(listener: (() => void | Promise<void>) | undefined): Promise<void> {
  try {
    await listener?.();
  } catch {
    // ownership proceeds regardless
  }
}
