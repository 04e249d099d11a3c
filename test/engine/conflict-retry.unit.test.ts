import { describe, expect, it } from 'vitest';
import { conflictRetry, CONFLICT_RETRIES, FEW_WRITERS } from '../../src/engine/commands/conflict-retry.js';
import { WrongExpectedRevisionError } from '../../src/ports/event-store.js';

const conflict = () => new WrongExpectedRevisionError('s', 0, 1);

describe('the conflict policy', () => {
  it(`a stream with few writers is decided again ${CONFLICT_RETRIES} times, then the conflict stands`, async () => {
    const conflicts = conflictRetry(FEW_WRITERS);
    const answers: boolean[] = [];
    for (let i = 0; i <= CONFLICT_RETRIES; i++) answers.push(await conflicts.again(conflict()));
    expect(answers).toEqual([...Array<boolean>(CONFLICT_RETRIES).fill(true), false]);
  });

  it('a time-bounded writer decides again, however often, until its budget has passed', async () => {
    let now = 0;
    const conflicts = conflictRetry({ withinMs: 1000 }, () => now);
    for (let i = 0; i < 20; i++) expect(await conflicts.again(conflict())).toBe(true);
    now = 1000;
    expect(await conflicts.again(conflict())).toBe(false);
  });

  it('the first conflict is decided again at once; other failures are never retried', async () => {
    const conflicts = conflictRetry(FEW_WRITERS);
    let settled = false;
    const first = conflicts.again(conflict()).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(true);
    await first;
    expect(await conflicts.again(new Error('disk full'))).toBe(false);
  });
});
