import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { markersFromFlags, markersToFlags, NO_MARKERS, parseMarkers, resultCount, stripMarkers } from '../../src/simulator/markers.js';
import { parseImageSize } from '../../src/simulator/image-size.js';
import { createTaskIdCodec } from '../../src/simulator/task-id.js';
import { finishTime, resolveStepMs, timeline } from '../../src/simulator/timeline.js';

describe('parseMarkers', () => {
  it('finds every marker case-insensitively anywhere in the text and ignores unknown ones', () => {
    expect(parseMarkers('a [SIM:Fail] b [sim:slow][sim:PARTIAL] [sim:4xx-poll] [sim:5xx] [sim:reject] [sim:nope]')).toEqual({
      fail: true,
      reject: true,
      unavailable: true,
      slow: true,
      partial: true,
      lostOnPoll: true,
    });
    expect(parseMarkers('no markers [sim fail] sim:fail')).toEqual(NO_MARKERS);
    expect(parseMarkers(undefined)).toEqual(NO_MARKERS);
  });

  it('round-trips the post-submit markers through flag letters', () => {
    const markers = parseMarkers('[sim:fail][sim:partial]');
    expect(markersFromFlags(markersToFlags(markers))).toEqual({ ...markers, reject: false, unavailable: false });
    expect(markersToFlags(NO_MARKERS)).toBe('');
  });

  it('strips markers for echoing and counts partial results as max(1, n-1)', () => {
    expect(stripMarkers('a [sim:fail] red  fox [SIM:slow]')).toBe('a red fox');
    expect([5, 2, 1].map((n) => resultCount(n, parseMarkers('[sim:partial]')))).toEqual([4, 1, 1]);
    expect(resultCount(3, NO_MARKERS)).toBe(3);
  });
});

describe('timeline', () => {
  const at = (ms: number, markers = NO_MARKERS, stepMs = 100) => timeline({ submittedAt: 1000, stepMs, markers, now: 1000 + ms });

  it('is queued for the first step, then 25/50/75 %, then completed at step 4 with its finish time', () => {
    expect(at(0)).toEqual({ status: 'queued', progress: 0 });
    expect(at(99)).toEqual({ status: 'queued', progress: 0 });
    expect([100, 250, 399].map((ms) => at(ms))).toEqual([
      { status: 'in_progress', progress: 25 },
      { status: 'in_progress', progress: 50 },
      { status: 'in_progress', progress: 75 },
    ]);
    expect(at(400)).toEqual({ status: 'completed', progress: 100, finishedAt: 1400 });
    expect(at(10_000)).toEqual({ status: 'completed', progress: 100, finishedAt: 1400 });
  });

  it('fails instead of completing with [sim:fail], takes 5x the steps with [sim:slow], and finishes at once with step 0', () => {
    expect(at(400, parseMarkers('[sim:fail]'))).toMatchObject({ status: 'failed', finishedAt: 1400 });
    expect(at(1999, parseMarkers('[sim:slow]'))).toEqual({ status: 'in_progress', progress: 95 });
    expect(finishTime(1000, 100, parseMarkers('[sim:slow]'))).toBe(3000);
    expect(at(0, NO_MARKERS, 0)).toEqual({ status: 'completed', progress: 100, finishedAt: 1000 });
  });

  it('takes its step from the option, else SIM_STEP_MS, else 150 ms, and refuses negative steps', () => {
    expect(resolveStepMs(5, { SIM_STEP_MS: '70' })).toBe(5);
    expect(resolveStepMs(undefined, { SIM_STEP_MS: '70' })).toBe(70);
    expect(resolveStepMs(undefined, {})).toBe(150);
    expect(() => resolveStepMs(undefined, { SIM_STEP_MS: '-1' })).toThrow();
  });
});

describe('task id codec', () => {
  const Payload = z.object({ f: z.literal('t'), v: z.number() });
  const codec = createTaskIdCodec('k1');

  it('decodes what it encoded and refuses any altered, foreign-keyed or other-shaped id', () => {
    const id = codec.encode({ f: 't', v: 7 });
    expect(codec.decode(id, Payload)).toEqual({ f: 't', v: 7 });
    expect(codec.decode(`${id}A`, Payload)).toBeUndefined();
    expect(codec.decode(id.replace('sim_', 'sim_A'), Payload)).toBeUndefined();
    expect(createTaskIdCodec('k2').decode(id, Payload)).toBeUndefined();
    expect(codec.decode(codec.encode({ f: 'other', v: 7 }), Payload)).toBeUndefined();
    expect(codec.decode('garbage', Payload)).toBeUndefined();
  });

  it('gives two submits alike two ids (two workers submitting in one millisecond), each decoding to the payload', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => codec.encode({ f: 't', v: 7 })));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(codec.decode(id, Payload)).toEqual({ f: 't', v: 7 });
  });
});

describe('parseImageSize', () => {
  it('reads pixel sizes, ratios and presets, caps sides at 4096 and defaults to 1024x1024', () => {
    expect(parseImageSize('1536x1024')).toEqual({ width: 1536, height: 1024 });
    expect(parseImageSize('800×600')).toEqual({ width: 800, height: 600 });
    expect(parseImageSize('3:2')).toEqual({ width: 1024, height: 683 });
    expect(parseImageSize('2K')).toEqual({ width: 2048, height: 2048 });
    expect(parseImageSize('8000*8000')).toEqual({ width: 4096, height: 4096 });
    expect(parseImageSize('auto')).toEqual({ width: 1024, height: 1024 });
    expect(parseImageSize(undefined)).toEqual({ width: 1024, height: 1024 });
    expect(parseImageSize('0x0')).toEqual({ width: 1024, height: 1024 });
  });
});
