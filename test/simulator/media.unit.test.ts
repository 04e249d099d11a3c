import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { makeMp4, makePng, makeWav } from '../../src/simulator/media.js';

describe('makePng', () => {
  it('encodes a decodable PNG of the given size, one colour per seed', () => {
    const a = PNG.sync.read(makePng(33, 17, 'seed-a'));
    expect({ width: a.width, height: a.height }).toEqual({ width: 33, height: 17 });
    const b = PNG.sync.read(makePng(33, 17, 'seed-b'));
    expect(a.data.subarray(0, 3).equals(b.data.subarray(0, 3))).toBe(false);
    expect(makePng(33, 17, 'seed-a').equals(makePng(33, 17, 'seed-a'))).toBe(true);
  });

  it('caps each side at 4096 and stays fast at that size', () => {
    const started = Date.now();
    const png = makePng(10_000, 4096, 1);
    expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual({ width: 4096, height: 4096 });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('makeWav', () => {
  it('writes a RIFF/WAVE PCM header whose sizes match the sample data', () => {
    const wav = makeWav(1.5);
    const dataBytes = 1.5 * 8000 * 2;
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString('ascii', 8, 12)).toBe('WAVE');
    expect(wav.toString('ascii', 12, 16)).toBe('fmt ');
    expect(wav.readUInt16LE(20)).toBe(1); // PCM
    expect(wav.readUInt16LE(22)).toBe(1); // mono
    expect(wav.readUInt32LE(24)).toBe(8000);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.toString('ascii', 36, 40)).toBe('data');
    expect(wav.readUInt32LE(40)).toBe(dataBytes);
    expect(wav.length).toBe(44 + dataBytes);
  });

  it('holds an audible tone rather than silence, at the requested sample rate', () => {
    const wav = makeWav(0.1, 16000);
    expect(wav.readUInt32LE(24)).toBe(16000);
    expect(wav.readUInt32LE(40)).toBe(0.1 * 16000 * 2);
    let peak = 0;
    for (let i = 44; i < wav.length; i += 2) peak = Math.max(peak, Math.abs(wav.readInt16LE(i)));
    expect(peak).toBeGreaterThan(5000);
  });
});

/** Top-level boxes of an ISO BMFF file, and a box found by path. */
function boxes(buf: Buffer, start = 0, end = buf.length): Array<{ type: string; start: number; end: number }> {
  const out: Array<{ type: string; start: number; end: number }> = [];
  for (let at = start; at + 8 <= end;) {
    const size = buf.readUInt32BE(at);
    out.push({ type: buf.toString('ascii', at + 4, at + 8), start: at, end: at + size });
    expect(size).toBeGreaterThanOrEqual(8);
    at += size;
  }
  return out;
}
function find(buf: Buffer, path: string[]): { start: number; end: number } {
  let range = { start: 0, end: buf.length };
  for (const type of path) {
    const inner = range.start === 0 && range.end === buf.length ? { start: 0, end: buf.length } : { start: range.start + 8, end: range.end };
    const box = boxes(buf, inner.start, inner.end).find((b) => b.type === type);
    if (!box) throw new Error(`no ${path.join('/')}`);
    range = box;
  }
  return range;
}

describe('makeMp4', () => {
  it('starts with an ftyp box and has mdat and moov whose mvhd carries the duration', () => {
    const mp4 = makeMp4(6);
    expect(mp4.toString('ascii', 4, 8)).toBe('ftyp');
    expect(mp4.toString('ascii', 8, 12)).toBe('isom');
    expect(boxes(mp4).map((b) => b.type)).toEqual(['ftyp', 'mdat', 'moov']);
    expect(boxes(mp4).at(-1)!.end).toBe(mp4.length);
    const mvhd = find(mp4, ['moov', 'mvhd']);
    const timescale = mp4.readUInt32BE(mvhd.start + 20);
    const duration = mp4.readUInt32BE(mvhd.start + 24);
    expect(duration / timescale).toBe(6);
  });

  it('has one video track whose single sample is the PNG frame stored in mdat', () => {
    const mp4 = makeMp4(2, { width: 64, height: 48 });
    const hdlr = find(mp4, ['moov', 'trak', 'mdia', 'hdlr']);
    expect(mp4.toString('ascii', hdlr.start + 16, hdlr.start + 20)).toBe('vide');
    const stco = find(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stco']);
    const offset = mp4.readUInt32BE(stco.start + 16);
    const stsz = find(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz']);
    const size = mp4.readUInt32BE(stsz.start + 20);
    const frame = PNG.sync.read(mp4.subarray(offset, offset + size));
    expect({ width: frame.width, height: frame.height }).toEqual({ width: 64, height: 48 });
  });
});
