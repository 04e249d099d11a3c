import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/lib/free-port.js';

describe('freePort', () => {
  it('never hands out a port it handed out lately, though the OS offers released ports again', async () => {
    // Asked 2,000 times one after the other, this machine's OS offered about 270 ports twice.
    const ports: number[] = [];
    for (let i = 0; i < 1000; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });
});
