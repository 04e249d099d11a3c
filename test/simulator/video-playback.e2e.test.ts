/**
 * The simulator's MP4 in a real browser (Debian's chromium, headless, playwright-core): it decodes
 * at every size the video families render (including sizes that are not multiples of 16, which
 * the H.264 stream crops), reports the duration written in its header, plays (its clock advances,
 * no MediaError), shows the seed's colour, and seeks and plays to the end.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeMp4, seedColour } from '../../src/simulator/media.js';
import { chromiumPath } from '../support/chromium.js';

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
  page = await browser.newPage();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

type Played = { width: number; height: number; duration: number; time: number; ended: boolean; error: number | null; pixel: number[] };

/**
 * Runs in the page (as text: this project's types have no DOM library). Loads the bytes into a
 * muted video element, seeks to `seekTo`, plays until the clock passes `playUntil` or the clip
 * ends, and reads back what the element reports and the colour of the middle pixel.
 */
const PLAY_IN_PAGE = `async ({ base64, playUntil, seekTo }) => {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const video = document.createElement('video');
  video.muted = true;
  video.src = URL.createObjectURL(new Blob([bytes], { type: 'video/mp4' }));
  document.body.replaceChildren(video);
  const once = (event) =>
    new Promise((resolve, reject) => {
      video.addEventListener(event, () => resolve(), { once: true });
      video.addEventListener('error', () => reject(new Error('MediaError ' + video.error?.code + ': ' + video.error?.message)), { once: true });
    });
  await once('loadeddata');
  if (seekTo > 0) {
    video.currentTime = seekTo;
    await once('seeked');
  }
  await video.play();
  const started = Date.now();
  while (video.currentTime < playUntil && !video.ended && Date.now() - started < 10000) await new Promise((r) => setTimeout(r, 50));
  video.pause();
  const canvas = document.createElement('canvas');
  canvas.width = video.videoWidth;
  canvas.height = video.videoHeight;
  const context = canvas.getContext('2d');
  context.drawImage(video, 0, 0);
  const pixel = [...context.getImageData(Math.floor(canvas.width / 2), Math.floor(canvas.height / 2), 1, 1).data].slice(0, 3);
  return { width: video.videoWidth, height: video.videoHeight, duration: video.duration, time: video.currentTime, ended: video.ended, error: video.error?.code ?? null, pixel };
}`;

async function play(bytes: Buffer, playUntil: number, seekTo = 0): Promise<Played> {
  const args = JSON.stringify({ base64: bytes.toString('base64'), playUntil, seekTo });
  return page.evaluate<Played>(`(${PLAY_IN_PAGE})(${args})`);
}

describe('the simulated MP4 in Chromium', () => {
  it.each([
    { width: 160, height: 90, seconds: 3 },
    { width: 1280, height: 720, seconds: 4 },
    { width: 1366, height: 768, seconds: 2 },
    { width: 1920, height: 1080, seconds: 2.5 },
    { width: 3840, height: 2160, seconds: 2 },
    { width: 64, height: 48, seconds: 2 },
  ])('decodes and plays $width×$height for $seconds s', async ({ width, height, seconds }) => {
    const seed = `seed-${width}`;
    const played = await play(makeMp4(seconds, { width, height, seed }), 0.5);
    expect(played).toMatchObject({ width, height, duration: seconds, error: null });
    expect(played.time).toBeGreaterThan(0.5);
    // The seed's colour, give or take the YCbCr round trip.
    seedColour(seed).forEach((channel, i) => expect(Math.abs(played.pixel[i]! - channel)).toBeLessThanOrEqual(6));
  });

  it('seeks into the last second of a long clip and plays to its end', async () => {
    const played = await play(makeMp4(600, { width: 1280, height: 720 }), 600, 599);
    expect(played).toMatchObject({ duration: 600, time: 600, ended: true, error: null });
  });
});
