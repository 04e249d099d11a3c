/** KAFKA_PREFIX as loadConfig reads it: none by default, a name Kafka accepts, refused naming itself otherwise. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('KAFKA_PREFIX', () => {
  it('is empty unless set, and kept as given when it is a legal start of a topic name', () => {
    expect(loadConfig({ KAFKA_BROKERS: 'k:9092' }).kafkaPrefix).toBe('');
    expect(loadConfig({ KAFKA_BROKERS: 'k:9092', KAFKA_PREFIX: 'staging.eu-1_' }).kafkaPrefix).toBe('staging.eu-1_');
  });

  it('refuses characters Kafka refuses in topic names, and a prefix past 100 characters', () => {
    expect(() => loadConfig({ KAFKA_BROKERS: 'k:9092', KAFKA_PREFIX: 'team a/' })).toThrow(
      /^invalid configuration: KAFKA_PREFIX: at most 100 of \[A-Za-z0-9._-\]/,
    );
    expect(() => loadConfig({ KAFKA_BROKERS: 'k:9092', KAFKA_PREFIX: 'x'.repeat(101) })).toThrow(/^invalid configuration: KAFKA_PREFIX:/);
  });
});
