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
