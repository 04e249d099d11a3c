/**
 * A command that follows another append (ExecuteOptions.after), as a synchronous call's
 * settlement follows its task's end: on the embedded store both commit in one group commit, and
 * the command is never written when the append it follows fails. Commands waiting beside it on
 * the same account go on either way.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountCommand } from '../../src/domain/account.js';
import { PrecedingAppendFailedError, type AppendOptions, type AppendResult } from '../../src/ports/event-store.js';
import { basis, meta, openedAccount, type AccountFixture } from '../support/account-fixture.js';
import { withOverrides } from '../support/event-store-overrides.js';
import { createAccountService } from '../../src/engine/accounts/account-service.js';
import { pino } from 'pino';

let fixture: AccountFixture;

const reserve = (reservationId: string): AccountCommand => ({
  type: 'ReserveQuota',
  data: { reservationId, taskId: `t-${reservationId}`, amount: 10, model: 'm', basis },
});
const settle = (reservationId: string): AccountCommand => ({ type: 'SettleQuota', data: { reservationId, actual: 7 } });

/** An append to a task stream, expecting `revision` (a wrong one makes it fail, as a conflicting task end would). */
const taskEnd = (taskId: string, revision: 'no_stream' | number): Promise<AppendResult> =>
  fixture.store.append(`task-${taskId}`, [{ id: randomUUID(), type: 'TaskMarked', data: { taskId }, metadata: meta() }], { expectedRevision: revision });

const accountTypes = async () =>
  (await fixture.store.readStream('account-a1')).map(
    (e) => `${e.type}${(e.data as { reservationId?: string }).reservationId ? ` ${(e.data as { reservationId: string }).reservationId}` : ''}`,
  );

beforeEach(async () => {
  fixture = await openedAccount();
  await fixture.accounts.execute('a1', { type: 'CreditQuota', data: { creditId: 'c1', amount: 1_000, note: 'top-up' } }, meta());
  for (const id of ['r1', 'r2', 'r3']) await fixture.accounts.execute('a1', reserve(id), meta());
});
afterEach(() => fixture.close());

describe('account service: a command that follows another append', () => {
  it('hands the append it follows to the store, and is written right behind it', async () => {
    const seen: (AppendOptions | undefined)[] = [];
    const store = withOverrides(fixture.store, {
      append: (stream, events, options) => {
        if (stream === 'account-a1') seen.push(options);
        return fixture.store.append(stream, events, options);
      },
    });
    const accounts = createAccountService({ events: store, log: pino({ level: 'silent' }) });
    const ending = taskEnd('r1', 'no_stream');
    const settled = await accounts.execute('a1', settle('r1'), meta(), { after: ending });
    const ended = await ending;
    expect(seen.at(-1)?.after).toBe(ending);
    // Queued while the task's end waited for its group commit: nothing came between them.
    expect(settled.position).toBe(ended.position + 1n);
    expect((await accountTypes()).at(-1)).toBe('QuotaSettled r1');
  });

  it('is refused, and writes nothing, when the append it follows fails; a command waiting beside it is written', async () => {
    const failing = taskEnd('r1', 5);
    failing.catch(() => undefined);
    const [followed, beside] = await Promise.allSettled([
      fixture.accounts.execute('a1', settle('r1'), meta(), { after: failing }),
      fixture.accounts.execute('a1', settle('r2'), meta()),
    ]);
    expect(followed.status).toBe('rejected');
    expect((followed as PromiseRejectedResult).reason).toBeInstanceOf(PrecedingAppendFailedError);
    expect(beside.status).toBe('fulfilled');
    const types = await accountTypes();
    expect(types).toContain('QuotaSettled r2');
    expect(types).not.toContain('QuotaSettled r1');
    // The reservation is still open: the task's own end decides how it closes.
    expect((await fixture.accounts.state('a1')).reserved).toBe(20);
  });

  it('several waiting together: each waits for its own append, and only the one whose append failed is refused', async () => {
    const ok1 = taskEnd('r1', 'no_stream');
    const failing = taskEnd('r2', 5);
    failing.catch(() => undefined);
    const ok3 = taskEnd('r3', 'no_stream');
    const outcomes = await Promise.allSettled([
      fixture.accounts.execute('a1', settle('r1'), meta(), { after: ok1 }),
      fixture.accounts.execute('a1', settle('r2'), meta(), { after: failing }),
      fixture.accounts.execute('a1', settle('r3'), meta(), { after: ok3 }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(PrecedingAppendFailedError);
    const types = await accountTypes();
    expect(types).toEqual(expect.arrayContaining(['QuotaSettled r1', 'QuotaSettled r3']));
    expect(types).not.toContain('QuotaSettled r2');
    const state = await fixture.accounts.state('a1');
    expect(state.reserved).toBe(10);
    expect(state.balance).toBe(1_000 - 14);
  });
});
