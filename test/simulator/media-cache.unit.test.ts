import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { makePng, makeWav, seedColour } from '../../src/simulator/media.js';

describe('cached media', () => {
  it('every pixel of a PNG is the seed colour, whatever was encoded before at that size', () => {
    for (const seed of ['first', 'second']) {
      const png = PNG.sync.read(makePng(70, 9, seed));
      const [r, g, b] = seedColour(seed);
      const pixels = new Set<string>();
      for (let i = 0; i < png.data.length; i += 4) pixels.add(`${png.data[i]},${png.data[i + 1]},${png.data[i + 2]},${png.data[i + 3]}`);
      expect([...pixels]).toEqual([`${r},${g},${b},255`]);
    }
  });

  it('hands out copies of a cached WAV file', () => {
    const first = makeWav(0.5);
    first.fill(0);
    expect(makeWav(0.5).toString('ascii', 0, 4)).toBe('RIFF');
  });
});
