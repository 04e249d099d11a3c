/**
 * Real media bytes for simulated results: PNG images, PCM WAV audio with a tone, and a small MP4
 * with an H.264 video track that browsers play. All generators are deterministic in their inputs, so a stateless file URL can be
 * served again and again with the same bytes; what does not depend on the seed is encoded once
 * and kept in a bounded cache, so serving a result file costs the simulator little.
 */
import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import { memoCache } from '../lib/memo-cache.js';
import { avcParameterSets, idrParts, idrPicture, skipPicture, type AvcPictureSize } from './h264.js';

export const MAX_IMAGE_SIDE = 4096;

export type Rgb = readonly [number, number, number];

/** A colour derived from the seed (never near-black, so it is visibly "an image"). */
export function seedColour(seed: string | number): Rgb {
  const digest = createHash('sha256').update(String(seed)).digest();
  const channel = (i: number): number => 48 + ((digest[i] ?? 0) % 208);
  return [channel(0), channel(1), channel(2)];
}

/**
 * A `width`×`height` PNG filled with the seed's colour. Sides are clamped to 1..4096. It is a
 * one-entry palette image (bit depth 1): every pixel is index 0 whatever the colour, so the
 * compressed pixels depend on the size alone and are encoded once per size (a bounded cache);
 * the seed only changes the 3-byte palette. A request for a result costs a few small copies,
 * not an encoding, and even 4096×4096 is a few kilobytes.
 */
export function makePng(width: number, height: number, seed: string | number): Buffer {
  const w = clampSide(width);
  const h = clampSide(height);
  const { head, pixels } = solidPngParts.getOrMake(`${w}x${h}`, () => encodeSolidPng(w, h));
  return Buffer.concat([head, pngChunk('PLTE', Buffer.from(seedColour(seed))), pixels]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Sizes in use are few (the requested sizes, their previews, the video tiers); each entry is a few kB. */
const solidPngParts = memoCache<string, { head: Buffer; pixels: Buffer }>(64);

/** Signature and IHDR (head); IDAT and IEND (pixels): what does not depend on the colour. */
function encodeSolidPng(w: number, h: number): { head: Buffer; pixels: Buffer } {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 3; // colour type: palette
  // compression, filter and interlace methods: 0
  // Each scanline: filter byte 0 (none), then ceil(w / 8) bytes of 1-bit indices, all 0.
  const scanlines = Buffer.alloc(h * (1 + Math.ceil(w / 8)));
  return {
    head: Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]),
    pixels: Buffer.concat([pngChunk('IDAT', deflateSync(scanlines)), pngChunk('IEND', Buffer.alloc(0))]),
  };
}

function pngChunk(type: string, data: Buffer): Buffer {
  const typeAndData = Buffer.concat([ascii(type), data]);
  return Buffer.concat([u32(data.length), typeAndData, u32(crc32(typeAndData))]);
}

function clampSide(side: number): number {
  if (!Number.isFinite(side)) return 1;
  return Math.min(MAX_IMAGE_SIDE, Math.max(1, Math.round(side)));
}

/**
 * A mono 16-bit PCM RIFF/WAVE file of `seconds` holding a sine tone (default 440 Hz at a third
 * of full scale). 44-byte canonical header followed by the samples. Files up to 1 MiB (the
 * simulated songs are 48 kB) are computed once per input and copied out of a bounded cache.
 */
export function makeWav(seconds: number, sampleRate = 8000, frequencyHz = 440): Buffer {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new Error('sampleRate must be a positive integer');
  const samples = Math.max(0, Math.round(Math.max(0, seconds) * sampleRate));
  if (samples * 2 > MAX_CACHED_WAV_BYTES) return encodeWav(samples, sampleRate, frequencyHz);
  // A copy: the cached bytes are never handed out, so no caller can alter another's file.
  return Buffer.from(wavFiles.getOrMake(`${samples}:${sampleRate}:${frequencyHz}`, () => encodeWav(samples, sampleRate, frequencyHz)));
}

const MAX_CACHED_WAV_BYTES = 2 ** 20;
const wavFiles = memoCache<string, Buffer>(16);

function encodeWav(samples: number, sampleRate: number, frequencyHz: number): Buffer {
  const dataBytes = samples * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  const amplitude = 32767 / 3;
  for (let i = 0; i < samples; i++) {
    out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRate)), 44 + i * 2);
  }
  return out;
}

export type Mp4Options = Readonly<{ width?: number; height?: number; seed?: string | number }>;

/** Seconds between pictures: the picture never changes, so one a second is plenty (and keeps an hour small). */
const SECONDS_PER_PICTURE = 1;
/**
 * The last picture lasts one 25 fps frame: Chromium counts a seek into the last picture as the
 * end of the clip, and a last picture of a whole second would make the final second unseekable.
 */
const LAST_PICTURE_MS = 40;

/** Picture durations (in the timescale) adding up to `total`: `step` each, the rest, and a short last one. */
export function pictureDurations(total: number, step: number, last: number): number[] {
  const durations = Array.from({ length: Math.floor(total / step) }, () => step);
  const rest = total - step * durations.length;
  if (rest > 0) durations.push(rest);
  const final = durations.pop() ?? 0;
  if (final > last) durations.push(final - last, last);
  else durations.push(final);
  return durations;
}

/** [count, value] runs of equal neighbours (the `stts` table). */
function runLengths(values: readonly number[]): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  for (const value of values) {
    const previous = runs.at(-1);
    if (previous?.[1] === value) previous[0]++;
    else runs.push([1, value]);
  }
  return runs;
}

/**
 * A small, playable MP4 (ISO BMFF): `ftyp`, then `moov` (first, so players start before the
 * whole file is in), then `mdat`. One H.264 video track (`avc1`, Constrained Baseline; see
 * h264.ts) of `width`×`height` showing the seed's colour: an IDR picture, then a P picture of
 * skipped macroblocks each second, the last one short (see LAST_PICTURE_MS). `mvhd`, `tkhd` and `mdhd`
 * carry the duration and the sample durations add up to it, so the header tells the truth about
 * what plays; `tkhd`, the sample entry and the SPS carry the size. Sizes are clamped to 2..4096
 * and rounded down to even (4:2:0). Browsers, ffprobe and MP4 parsers all read it as what it is.
 *
 * The bytes that depend on the size alone (parameter sets, the IDR picture but for its 384
 * colour samples, the P pictures) are made once per size and kept in a bounded cache.
 */
export function makeMp4(seconds: number, options: Mp4Options = {}): Buffer {
  const width = evenSide(options.width ?? 160);
  const height = evenSide(options.height ?? 90);
  const timescale = 1000;
  const duration = Math.max(1, Math.round(Math.max(0, seconds) * timescale));
  const durations = pictureDurations(duration, SECONDS_PER_PICTURE * timescale, LAST_PICTURE_MS);
  const count = durations.length;
  const { sps, pps, profile, compatibility, level, idr, skips } = avcStreamParts.getOrMake(`${width}x${height}`, () => encodeAvcStreamParts({ width, height }));

  const samples: Buffer[] = [lengthPrefixed(idrPicture({ width, height }, seedColour(options.seed ?? 'mp4'), idr))];
  for (let i = 1; i < count; i++) samples.push(skips[i % skips.length]!);

  const ftyp = box('ftyp', ascii('isom'), u32(0x200), ascii('isom'), ascii('iso2'), ascii('avc1'), ascii('mp41'));
  const mvhd = fullBox('mvhd', 0, 0, u32(0), u32(0), u32(timescale), u32(duration), u32(0x00010000), u16(0x0100), zeros(10), MATRIX, zeros(24), u32(2));
  const tkhd = fullBox(
    'tkhd',
    0,
    3,
    u32(0),
    u32(0),
    u32(1),
    zeros(4),
    u32(duration),
    zeros(8),
    u16(0),
    u16(0),
    u16(0),
    zeros(2),
    MATRIX,
    u32(width << 16),
    u32(height << 16),
  );
  const mdhd = fullBox('mdhd', 0, 0, u32(0), u32(0), u32(timescale), u32(duration), u16(0x55c4 /* 'und' */), u16(0));
  const hdlr = fullBox('hdlr', 0, 0, u32(0), ascii('vide'), zeros(12), Buffer.from('VideoHandler\0', 'ascii'));
  const vmhd = fullBox('vmhd', 0, 1, u16(0), zeros(6));
  const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
  const avcC = box(
    'avcC',
    Buffer.from([1, profile, compatibility, level, 0xff /* 4-byte NAL lengths */, 0xe1 /* one SPS */]),
    u16(sps.length),
    sps,
    Buffer.from([1]),
    u16(pps.length),
    pps,
  );
  const sampleEntry = box(
    'avc1',
    zeros(6),
    u16(1), // reserved, data_reference_index
    zeros(16), // pre_defined, reserved, pre_defined[3]
    u16(width),
    u16(height),
    u32(0x00480000),
    u32(0x00480000), // 72 dpi
    zeros(4),
    u16(1), // reserved, frame_count
    zeros(32), // compressorname
    u16(0x0018),
    u16(0xffff), // depth, pre_defined = -1
    avcC,
  );
  const runs = runLengths(durations);
  const timeToSample = [u32(runs.length), ...runs.flatMap(([run, delta]) => [u32(run), u32(delta)])];
  const skipSize = skips[0]!.length; // every P picture has the same size (frame_num has a fixed width)
  const stbl = (chunkOffset: number): Buffer =>
    box(
      'stbl',
      fullBox('stsd', 0, 0, u32(1), sampleEntry),
      fullBox('stts', 0, 0, ...timeToSample),
      fullBox('stss', 0, 0, u32(1), u32(1)), // the IDR picture is the only sync sample
      fullBox('stsc', 0, 0, u32(1), u32(1), u32(count), u32(1)), // one chunk holds every sample
      fullBox('stsz', 0, 0, u32(0), u32(count), u32(samples[0]!.length), ...Array.from({ length: count - 1 }, () => u32(skipSize))),
      fullBox('stco', 0, 0, u32(1), u32(chunkOffset)),
    );
  const moovAt = (chunkOffset: number): Buffer => box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, box('minf', vmhd, dinf, stbl(chunkOffset)))));
  // The chunk offset is a fixed-width field: measure moov once, then write it with the real offset.
  const chunkOffset = ftyp.length + moovAt(0).length + 8;
  const mdat = box('mdat', ...samples);
  return Buffer.concat([ftyp, moovAt(chunkOffset), mdat]);
}

/** Sizes in use are few (the video tiers); an entry is about a byte per 256 pixels (32 kB at 4K). */
const avcStreamParts = memoCache<string, ReturnType<typeof encodeAvcStreamParts>>(16);

function encodeAvcStreamParts(size: AvcPictureSize) {
  // frame_num counts modulo 16, so sixteen P pictures cycle (index 0 stands for 16, 32, …).
  const skips = Array.from({ length: 16 }, (_, i) => lengthPrefixed(skipPicture(size, i === 0 ? 16 : i)));
  return { ...avcParameterSets(size), idr: idrParts(size), skips };
}

function lengthPrefixed(nal: Buffer): Buffer {
  return Buffer.concat([u32(nal.length), nal]);
}

function evenSide(side: number): number {
  const clamped = Math.min(MAX_IMAGE_SIDE, Math.max(2, Math.round(Number.isFinite(side) ? side : 2)));
  return clamped - (clamped % 2);
}

const MATRIX = Buffer.concat([u32(0x00010000), u32(0), u32(0), u32(0), u32(0x00010000), u32(0), u32(0), u32(0), u32(0x40000000)]);

function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([u32(8 + body.length), ascii(type), body]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Buffer[]): Buffer {
  return box(type, u32(((version & 0xff) << 24) | (flags & 0xffffff)), ...parts);
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value >>> 0);
  return b;
}

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value & 0xffff);
  return b;
}

const zeros = (n: number): Buffer => Buffer.alloc(n);
const ascii = (text: string): Buffer => Buffer.from(text, 'ascii');
