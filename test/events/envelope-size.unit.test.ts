/**
 * An event too large for a broker message leaves the gateway without its data, marked
 * `truncated` (a consumer reads it from the store): one large event can never hold up the
 * events behind it on the bus.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedDomainEvent } from '../../src/domain/recorded.js';
import { envelopeOf, MAX_ENVELOPE_DATA_BYTES } from '../../src/engine/outbound/event-envelope.js';

const event = (data: unknown): RecordedDomainEvent =>
  ({
    id: 'e1',
    type: 'TaskSubmitted',
    streamName: 'task-t1',
    revision: 0,
    position: 7n,
    data,
    metadata: { at: '2026-01-01T00:00:00.000Z', accountId: 'a1' },
  }) as unknown as RecordedDomainEvent;

describe('envelope size', () => {
  it('keeps the data of an ordinary event', () => {
    expect(envelopeOf(event({ prompt: 'small' }))).toMatchObject({ data: { prompt: 'small' } });
    expect(envelopeOf(event({ prompt: 'small' }))).not.toHaveProperty('truncated');
  });

  it('leaves out data larger than the limit and says how large it was', () => {
    const big = { image: 'A'.repeat(MAX_ENVELOPE_DATA_BYTES + 1) };
    const envelope = envelopeOf(event(big))!;
    expect(envelope.data).toBeNull();
    expect(envelope.truncated?.bytes).toBe(Buffer.byteLength(JSON.stringify(big)));
    expect(Buffer.byteLength(JSON.stringify(envelope))).toBeLessThan(2048);
    expect(envelope).toMatchObject({ id: 'e1', stream: 'task-t1', revision: 0, position: '7' });
  });
});
