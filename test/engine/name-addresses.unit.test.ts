/**
 * The submit-time check's memory of names (src/engine/outbound/name-addresses.ts), over a
 * resolver that counts what it is asked: one question per name while an answer is kept, names
 * asked once at a time, a silent resolver answered by the timeout, and an answer forgotten after
 * its time. The real resolver is used by every end-to-end URL test; this one stands in for a
 * slow or silent one, which this machine's cannot be made to be on demand.
 */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { nameAnswers, type LookupAll } from '../../src/engine/outbound/name-addresses.js';

function countingResolver(answer: (host: string) => LookupAddress[] | 'silent' | 'fails') {
  const asked: string[] = [];
  const lookup: LookupAll = (host, _options, callback) => {
    asked.push(host);
    const a = answer(host);
    if (a === 'silent') return;
    setTimeout(() => (a === 'fails' ? callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []) : callback(null, a)), 5);
  };
  return { asked, lookup };
}

describe('the names a URL check resolves', () => {
  it('asks once per name, for concurrent and later checks alike, whatever its case', async () => {
    const resolver = countingResolver((h) => (h === 'media.example.com' ? [{ address: '93.184.215.14', family: 4 }] : 'fails'));
    const addressesOf = nameAnswers(resolver.lookup);
    const first = await Promise.all([addressesOf('media.example.com', 1000), addressesOf('MEDIA.example.com', 1000), addressesOf('nowhere.example', 1000)]);
    expect(first[0]).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect(first[1]).toEqual(first[0]);
    expect(first[2]).toEqual([]);
    expect(await addressesOf('media.example.com', 1000)).toEqual(first[0]);
    expect(await addressesOf('nowhere.example', 1000)).toEqual([]);
    expect(resolver.asked.sort()).toEqual(['media.example.com', 'nowhere.example']);
  });

  it('answers no addresses when the resolver is silent past the timeout, and asks again once the answer is old', async () => {
    const resolver = countingResolver(() => 'silent');
    const addressesOf = nameAnswers(resolver.lookup, 400);
    const started = Date.now();
    expect(await addressesOf('slow.example', 100)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(await addressesOf('slow.example', 100)).toEqual([]);
    expect(resolver.asked).toEqual(['slow.example']);
    await new Promise((r) => setTimeout(r, 450));
    expect(await addressesOf('slow.example', 100)).toEqual([]);
    expect(resolver.asked).toEqual(['slow.example', 'slow.example']);
  });
});
