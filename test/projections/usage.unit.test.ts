import { describe, expect, it } from 'vitest';
import type { DomainEvent, PriceBasis } from '../../src/domain/events.js';
import type { RecordedDomainEvent } from '../../src/domain/recorded.js';
import { ledgerProjection } from '../../projections/ledger.js';
import { usageDocId, usageProjection, type UsageDoc } from '../../projections/usage.js';
import { given } from './support.js';

const basis = (model: string, units: number): PriceBasis => ({ model, group: 'default', unit: 'image', unitPrice: 10, groupRatioPermille: 1000, units });
const settled = (taskId: string, charged: number, model: string | undefined, tokenId?: string): DomainEvent => ({
  type: 'QuotaSettled',
  data: {
    reservationId: `r-${taskId}`,
    taskId,
    reserved: charged,
    actual: charged,
    charged,
    ...(model ? { basis: basis(model, charged / 10) } : {}),
    ...(tokenId ? { tokenId } : {}),
  },
});
const A = 'account-a1';
const B = 'account-b1';

describe('usage projection', () => {
  it('sums charges, settled tasks and units per account, hour, model and key', () => {
    const docs = given(usageProjection, [
      [A, settled('t1', 20, 'm', 'k1')],
      [A, settled('t2', 10, 'm', 'k1')],
      [A, settled('t3', 0, 'm', 'k1')],
      [A, settled('t4', 30, 'n', 'k1')],
      [A, settled('t5', 40, 'm', 'k2')],
      [A, settled('t6', 50, 'm')],
      [A, settled('t7', 60, undefined, 'k1')],
      [B, settled('t8', 70, 'm', 'k3')],
      [A, { type: 'QuotaReleased', data: { reservationId: 'r9', taskId: 't9', amount: 10, reason: 'failed', tokenId: 'k1' } }],
    ]);
    // The support's events are all in the hour 2026-01-01T00.
    const doc = (accountId: string, model: string, tokenId: string) => docs.get(usageDocId({ accountId, hour: '2026-01-01T00', model, tokenId }));
    expect(doc('a1', 'm', 'k1')).toEqual({
      accountId: 'a1',
      hour: '2026-01-01T00',
      day: '2026-01-01',
      month: '2026-01',
      model: 'm',
      tokenId: 'k1',
      charged: 30,
      // A free settlement counts as a settled task.
      tasks: 3,
      units: 3,
    } satisfies UsageDoc);
    expect(doc('a1', 'n', 'k1')).toMatchObject({ charged: 30, tasks: 1 });
    expect(doc('a1', 'm', 'k2')).toMatchObject({ charged: 40, tasks: 1 });
    expect(doc('a1', 'm', '-')).toMatchObject({ charged: 50, tasks: 1 });
    expect(doc('a1', '-', 'k1')).toMatchObject({ charged: 60, tasks: 1, units: 0 });
    expect(doc('b1', 'm', 'k3')).toMatchObject({ charged: 70, tasks: 1 });
    expect(docs.size).toBe(6);
  });

  it('an event belongs to the hour of its decision (UTC), whatever the zone it was written in', () => {
    const event = (at: string) =>
      ({ ...settled('t1', 10, 'm', 'k1'), id: 'e1', streamName: A, revision: 0, position: 1n, metadata: { at } }) as RecordedDomainEvent;
    expect(usageProjection.documentId(event('2026-03-01T23:59:59.999Z'))).toBe(
      usageDocId({ accountId: 'a1', hour: '2026-03-01T23', model: 'm', tokenId: 'k1' }),
    );
    expect(usageProjection.evolve(undefined, event('2026-03-02T01:30:00+02:00'))).toMatchObject({ hour: '2026-03-01T23', day: '2026-03-01', month: '2026-03' });
  });

  it('ids are distinct for tuples whose parts hold the separators', () => {
    expect(usageDocId({ accountId: 'a', hour: 'h', model: 'm","x', tokenId: 'k' })).not.toBe(
      usageDocId({ accountId: 'a', hour: 'h', model: 'm', tokenId: 'x","k' }),
    );
  });
});

describe('ledger projection: the key of each entry', () => {
  it('reservations, settlements and releases carry the token; credits do not', () => {
    const entries = [
      ...given(ledgerProjection, [
        [A, { type: 'QuotaCredited', data: { creditId: 'c1', amount: 100, note: '' } }],
        [A, { type: 'QuotaReserved', data: { reservationId: 'r1', taskId: 't1', amount: 20, model: 'm', tokenId: 'k1', basis: basis('m', 2) } }],
        [A, { type: 'QuotaSettled', data: { reservationId: 'r1', taskId: 't1', reserved: 20, actual: 20, charged: 20, basis: basis('m', 2), tokenId: 'k1' } }],
        [A, { type: 'QuotaReserved', data: { reservationId: 'r2', taskId: 't2', amount: 20, model: 'm', basis: basis('m', 2) } }],
        [A, { type: 'QuotaReleased', data: { reservationId: 'r2', taskId: 't2', amount: 20, reason: 'failed' } }],
      ]).values(),
    ];
    expect(entries.map((e) => [e.type, e.tokenId, e.model])).toEqual([
      ['QuotaCredited', null, null],
      ['QuotaReserved', 'k1', 'm'],
      ['QuotaSettled', 'k1', 'm'],
      ['QuotaReserved', null, 'm'],
      // The release names no model: the statement route takes it from the reservation's entry.
      ['QuotaReleased', null, null],
    ]);
  });
});
