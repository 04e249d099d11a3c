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

/** Reads the bits of an RBSP (emulation prevention bytes dropped), with the Exp-Golomb codes. */
function bitReader(nal: Buffer) {
  const rbsp: number[] = [];
  for (let i = 0, zeros = 0; i < nal.length; i++) {
    const byte = nal[i]!;
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    rbsp.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  let at = 0;
  const u = (bits: number): number => {
    let value = 0;
    for (let i = 0; i < bits; i++, at++) value = value * 2 + ((rbsp[at >> 3]! >> (7 - (at & 7))) & 1);
    return value;
  };
  const ue = (): number => {
    let zeros = 0;
    while (u(1) === 0) zeros++;
    return 2 ** zeros - 1 + u(zeros);
  };
  return { u, ue };
}

/** Profile and the size a decoder reports (macroblocks less the cropping) of an SPS NAL unit. */
function spsInfo(sps: Buffer): { profile: number; width: number; height: number } {
  const r = bitReader(sps.subarray(1));
  const profile = r.u(8);
  r.u(16); // constraint flags, level
  r.ue(); // seq_parameter_set_id
  r.ue(); // log2_max_frame_num_minus4
  expect(r.ue()).toBe(2); // pic_order_cnt_type
  r.ue(); // max_num_ref_frames
  r.u(1);
  const mbWidth = r.ue() + 1;
  const mbHeight = r.ue() + 1;
  expect(r.u(1)).toBe(1); // frame_mbs_only_flag
  r.u(1);
  const crop = r.u(1) ? [r.ue(), r.ue(), r.ue(), r.ue()] : [0, 0, 0, 0];
  return { profile, width: mbWidth * 16 - 2 * (crop[0]! + crop[1]!), height: mbHeight * 16 - 2 * (crop[2]! + crop[3]!) };
}

const STBL = ['moov', 'trak', 'mdia', 'minf', 'stbl'];

/** The `avc1` sample entry: its size fields and the SPS of its `avcC`. */
function avc1Of(mp4: Buffer): { width: number; height: number; sps: Buffer } {
  const stsd = find(mp4, [...STBL, 'stsd']);
  const [entry] = boxes(mp4, stsd.start + 16, stsd.end);
  expect(entry?.type).toBe('avc1');
  const [avcC] = boxes(mp4, entry!.start + 86, entry!.end);
  expect(avcC?.type).toBe('avcC');
  const spsLength = mp4.readUInt16BE(avcC!.start + 14);
  return {
    width: mp4.readUInt16BE(entry!.start + 32),
    height: mp4.readUInt16BE(entry!.start + 34),
    sps: mp4.subarray(avcC!.start + 16, avcC!.start + 16 + spsLength),
  };
}

/** The samples: each a 4-byte length and one NAL unit, in the one chunk `stco` points at. */
function samplesOf(mp4: Buffer): { sizes: number[]; deltas: number[]; nalTypes: number[]; sync: number[] } {
  const stsz = find(mp4, [...STBL, 'stsz']);
  const count = mp4.readUInt32BE(stsz.start + 16);
  const sizes = Array.from({ length: count }, (_, i) => mp4.readUInt32BE(stsz.start + 20 + 4 * i));
  const stts = find(mp4, [...STBL, 'stts']);
  const deltas = Array.from({ length: mp4.readUInt32BE(stts.start + 12) }).flatMap((_, i) =>
    Array.from({ length: mp4.readUInt32BE(stts.start + 16 + 8 * i) }, () => mp4.readUInt32BE(stts.start + 20 + 8 * i)),
  );
  const stss = find(mp4, [...STBL, 'stss']);
  const sync = Array.from({ length: mp4.readUInt32BE(stss.start + 12) }, (_, i) => mp4.readUInt32BE(stss.start + 16 + 4 * i));
  let at = mp4.readUInt32BE(find(mp4, [...STBL, 'stco']).start + 16);
  const nalTypes = sizes.map((size) => {
    expect(mp4.readUInt32BE(at)).toBe(size - 4);
    const type = mp4[at + 4]! & 0x1f;
    at += size;
    return type;
  });
  expect(at).toBe(find(mp4, ['mdat']).end);
  return { sizes, deltas, nalTypes, sync };
}

describe('makeMp4', () => {
  it('is ftyp, moov, then mdat, and mvhd, tkhd and mdhd carry the duration', () => {
    const mp4 = makeMp4(6);
    expect(mp4.toString('ascii', 4, 8)).toBe('ftyp');
    expect(mp4.toString('ascii', 8, 12)).toBe('isom');
    expect(boxes(mp4).map((b) => b.type)).toEqual(['ftyp', 'moov', 'mdat']);
    expect(boxes(mp4).at(-1)!.end).toBe(mp4.length);
    const mvhd = find(mp4, ['moov', 'mvhd']);
    expect(mp4.readUInt32BE(mvhd.start + 24) / mp4.readUInt32BE(mvhd.start + 20)).toBe(6);
    const tkhd = find(mp4, ['moov', 'trak', 'tkhd']);
    expect(mp4.readUInt32BE(tkhd.start + 28)).toBe(6000);
    const mdhd = find(mp4, ['moov', 'trak', 'mdia', 'mdhd']);
    expect(mp4.readUInt32BE(mdhd.start + 24) / mp4.readUInt32BE(mdhd.start + 20)).toBe(6);
  });

  it('has one H.264 video track: an IDR picture, then a P picture a second, the samples adding up to the duration', () => {
    const mp4 = makeMp4(2.5, { width: 64, height: 48 });
    const hdlr = find(mp4, ['moov', 'trak', 'mdia', 'hdlr']);
    expect(mp4.toString('ascii', hdlr.start + 16, hdlr.start + 20)).toBe('vide');
    const { deltas, nalTypes, sync } = samplesOf(mp4);
    expect(deltas).toEqual([1000, 1000, 460, 40]);
    expect(nalTypes).toEqual([5, 1, 1, 1]);
    expect(sync).toEqual([1]);
    expect(samplesOf(makeMp4(3600)).deltas.reduce((a, b) => a + b, 0)).toBe(3_600_000);
  });

  it.each([
    [1280, 720],
    [1366, 768],
    [1920, 1080],
    [3840, 2160],
    [64, 48],
  ])('states %i×%i in tkhd, the sample entry and the coded stream', (width, height) => {
    const mp4 = makeMp4(4, { width, height });
    const tkhd = find(mp4, ['moov', 'trak', 'tkhd']);
    expect({ width: mp4.readUInt32BE(tkhd.start + 84) >>> 16, height: mp4.readUInt32BE(tkhd.start + 88) >>> 16 }).toEqual({ width, height });
    const avc1 = avc1Of(mp4);
    expect({ width: avc1.width, height: avc1.height }).toEqual({ width, height });
    expect(spsInfo(avc1.sps)).toEqual({ profile: 66, width, height });
  });

  it('rounds sizes to even numbers within 2..4096', () => {
    expect(spsInfo(avc1Of(makeMp4(1, { width: 33, height: 17 })).sps)).toMatchObject({ width: 32, height: 16 });
    expect(spsInfo(avc1Of(makeMp4(1, { width: 1, height: 9000 })).sps)).toMatchObject({ width: 2, height: 4096 });
  });

  it('shows the seed: same size, different colour samples', () => {
    const a = makeMp4(3, { seed: 'a' });
    const b = makeMp4(3, { seed: 'b' });
    expect(a.length).toBe(b.length);
    expect(a.equals(b)).toBe(false);
    expect(makeMp4(3, { seed: 'a' }).equals(a)).toBe(true);
  });

  it('stays small: 20 s of 4K and an hour of 720p', () => {
    expect(makeMp4(20, { width: 3840, height: 2160 }).length).toBeLessThan(40_000);
    expect(makeMp4(3600, { width: 1280, height: 720 }).length).toBeLessThan(80_000);
  });
});
