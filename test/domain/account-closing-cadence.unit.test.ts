import { describe, expect, it } from 'vitest';
import { applyAccountEvents, mutableAccountState, type AccountEvent } from '../../src/domain/account.js';
import { eventsBeforeClosing, SNAPSHOT_EVERY, summaryEntries } from '../../src/domain/account-snapshot.js';
import { basis } from '../support/account-fixture.js';

const opened = () => {
  const state = mutableAccountState();
  applyAccountEvents(state, [
    { type: 'AccountOpened', data: { accountId: 'a1', userId: 'u1', group: 'default' } },
    { type: 'QuotaCredited', data: { creditId: 'c1', amount: 1e12, note: '' } },
  ]);
  return state;
};
const reserved = (i: number, tokenId?: string): AccountEvent => ({
  type: 'QuotaReserved',
  data: { reservationId: `res_${i}`, taskId: `task_${i}`, amount: 1, model: 'm', ...(tokenId ? { tokenId } : {}), basis },
});

/** Closes the books as the account service does (after eventsBeforeClosing events): each closing's entries and the events since the one before. */
function closings(events: number, event: (i: number) => AccountEvent): { entries: number; since: number }[] {
  const state = opened();
  const made: { entries: number; since: number }[] = [];
  let since = 0;
  for (let i = 0; i < events; i++) {
    applyAccountEvents(state, [event(i)]);
    if (++since >= eventsBeforeClosing(state)) {
      made.push({ entries: summaryEntries(state), since });
      since = 0;
    }
  }
  return made;
}

describe('how often the books close', () => {
  it('every SNAPSHOT_EVERY events while the summary is small', () => {
    const settledAtOnce = (i: number): AccountEvent =>
      i % 2 === 0 ? reserved(i) : { type: 'QuotaReleased', data: { reservationId: `res_${i - 1}`, taskId: `task_${i - 1}`, amount: 1, reason: 'x' } };
    expect(closings(10 * SNAPSHOT_EVERY, settledAtOnce)).toHaveLength(10);
  });

  it('however fast the summary grows, the books still close, each closing carrying at most three entries per event since the last', () => {
    // Two entries an event, the most one can add: a reservation and a token new to the account.
    const made = closings(200_000, (i) => reserved(i, `tok_${i}`));
    // At 1,000 events, then whenever the events since reach the last closing's entries (then a
    // third of the entries: E + 2N <= 3N): 2,001 entries after the first, 6,003 after the second, …
    expect(made.map((c) => c.since)).toEqual([1000, 2001, 6003, 18009, 54027]);
    for (const { entries, since } of made) expect(entries).toBeLessThanOrEqual(3 * since);
  });

  it('a hot account with thousands open closes far less often than every 1,000 events', () => {
    const state = opened();
    for (let i = 0; i < 30_000; i++) applyAccountEvents(state, [reserved(i)]);
    expect(eventsBeforeClosing(state)).toBe(10_001);
  });
});
