/**
 * Bus messages as Kafka records: the key is the message key, the value its value, the headers
 * its headers plus one reserved header carrying the dedup id (consumers ignore an id they have
 * processed, since delivery is at-least-once). The partition is set explicitly to
 * `partitionOf(key)` (murmur2, as Kafka's default partitioner), so the bus and Kafka agree.
 */
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';
import { requireNonEmpty, type BusMessage, type DeliveredMessage } from '../../ports/bus.js';

/** Reserved header name: the message's dedup id. */
export const ID_HEADER = 'gateway-message-id';

export function checkTopic(topic: unknown): string {
  const name = requireNonEmpty(topic, 'topic');
  if (name.length > 249 || !/^[A-Za-z0-9._-]+$/.test(name)) {
    throw new TypeError(`invalid Kafka topic name ${JSON.stringify(name)}: 1-249 of [A-Za-z0-9._-]`);
  }
  return name;
}

export function toKafkaMessage(m: BusMessage, partition: number): Message {
  return { key: m.key, value: m.value, partition, headers: { ...m.headers, [ID_HEADER]: m.id } };
}

export function fromKafkaMessage(topic: string, partition: number, record: KafkaMessage): DeliveredMessage {
  const headers: Record<string, string> = {};
  let id: string | undefined;
  for (const [name, raw] of Object.entries(record.headers ?? {})) {
    const value = headerText(raw);
    if (value === undefined) continue;
    if (name === ID_HEADER) id = value;
    else headers[name] = value;
  }
  const message: DeliveredMessage = {
    // A record not published through this bus has no id header: its coordinates are unique.
    id: id ?? `${topic}/${partition}/${record.offset}`,
    key: record.key?.toString('utf8') ?? '',
    value: record.value?.toString('utf8') ?? '',
    topic,
    partition,
    offset: BigInt(record.offset),
  };
  if (Object.keys(headers).length > 0) message.headers = headers;
  return message;
}

function headerText(raw: IHeaders[string]): string | undefined {
  const value = Array.isArray(raw) ? raw.at(-1) : raw;
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toString('utf8');
}
