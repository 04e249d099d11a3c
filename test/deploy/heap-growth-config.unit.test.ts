/** HEAP_GROWTH_PERCENT: 20 unless set, 0 leaves growth to V8, and a bad value refuses to start in one line naming it. */
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

it('is 20 by default, and 0 (V8 decides) or any whole percent up to 400 when set', () => {
  expect(loadConfig({}).heapGrowthPercent).toBe(20);
  expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
  expect(loadConfig({ HEAP_GROWTH_PERCENT: '400' }).heapGrowthPercent).toBe(400);
});

it.each(['-1', '2.5', 'twenty', '401'])('refuses %s in one line naming the setting', (bad) => {
  expect(() => loadConfig({ HEAP_GROWTH_PERCENT: bad })).toThrow(/^invalid configuration: HEAP_GROWTH_PERCENT: [^\n]+$/);
});
