/**
 * The web console in a real browser (Debian's chromium, headless, driven by playwright-core)
 * against the assembled gateway: a user signs in, creates an API key and reads it off the page,
 * submits tasks with it from the page and watches them complete live (the event stream, no
 * reload), sees the images, the song playable, the video playing, the charge on the task, in the figures and in the
 * ledger with its chart, and rotates the webhook secret; an administrator sees the users,
 * channels, price table and metrics. Screenshots go to test/console/output/.
 *
 * Chromium is required, never skipped: CHROMIUM_PATH, else `chromium` on the PATH (CI installs
 * it: .ci/run).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from '../support/chromium.js';
import { adminClient, ADMIN_PASSWORD, newUser, startGateway, type Client, type TestGateway } from '../support/gateway.js';

const OUTPUT = resolve('test/console/output');

/** What the test reads of elements in the page (this project's types have no DOM library). */
type LoadedImage = { naturalWidth: number };
type Media = {
  readyState: number;
  duration: number;
  controls: boolean;
  src: string;
  videoWidth: number;
  currentTime: number;
  muted: boolean;
  error: { code: number; message: string } | null;
  play(): Promise<void>;
  pause(): void;
};
/** Slow enough that a task is seen queued and in progress before it completes. */
const ENGINE = { SIM_STEP_MS: '200', POLL_INTERVAL_MS: '50' };
const CREDIT = 1_000_000;
/** Two `anime` images at 10,000 each, a song at 50,000, 4 s of Vid-H3 at 5,000 (the embedded default's prices). */
const IMAGE_COST = 20_000;
const SONG_COST = 50_000;
const VIDEO_COST = 20_000;
const SPENT = IMAGE_COST + SONG_COST + VIDEO_COST;

let gw: TestGateway;
let admin: Client;
let user: { username: string; password: string };
let browser: Browser;

beforeAll(async () => {
  // The console as `npm run console:build` builds it, into console/dist, which the gateway serves.
  const build = spawnSync(resolve('node_modules/.bin/vite'), ['build', 'console', '--logLevel', 'warn'], { encoding: 'utf8' });
  expect(build.status, `console build failed:\n${build.stdout}\n${build.stderr}`).toBe(0);
  mkdirSync(OUTPUT, { recursive: true });
  [gw, browser] = await Promise.all([startGateway(ENGINE), chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })]);
  admin = await adminClient(gw);
  user = await newUser(admin, { credit: CREDIT });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

/** Script errors and content security policy violations of the pages: none expected. */
const pageProblems: string[] = [];

async function newPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // Deleting and rotating ask first.
  page.on('dialog', (dialog) => void dialog.accept());
  page.on('pageerror', (error) => pageProblems.push(`${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (/content security policy/i.test(message.text())) pageProblems.push(`${page.url()}: ${message.text()}`);
  });
  return page;
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${gw.url}/console/`);
  await page.getByTestId('login-username').fill(username);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
  await poll(() => page.getByTestId('username').textContent()).toBe(username);
  await poll(() => page.getByTestId('live-state').textContent()).toBe('live');
}

/** Every status a task's row shows until it is final (read every 25 ms). */
async function statusesUntilFinal(page: Page, taskId: string): Promise<string[]> {
  const status = page.locator(`tr[data-task-id="${taskId}"]`).getByTestId('task-status');
  const seen: string[] = [];
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const text = (await status.textContent({ timeout: 5_000 })) ?? '';
    if (seen.at(-1) !== text) seen.push(text);
    if (text === 'completed' || text === 'failed') return seen;
    await page.waitForTimeout(25);
  }
  throw new Error(`task ${taskId} not final in the page: ${seen.join(' → ')}`);
}

/** What the page shows, read until it matches (the page updates itself, live). */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

const figure = async (page: Page, id: string) => Number(((await page.getByTestId(`figure-${id}`).textContent()) ?? '').replace(/,/g, ''));

describe('the web console', () => {
  it('a user signs in, makes a key, submits tasks, watches them complete live, sees results and what they cost, and manages the key', async () => {
    const page = await newPage();
    await page.goto(`${gw.url}/console/tasks`);
    await page.getByTestId('login-form').waitFor();
    await page.screenshot({ path: join(OUTPUT, 'login.png') });
    await signIn(page, user.username, user.password);
    expect(await figure(page, 'balance')).toBe(CREDIT);

    // A key: the full key is on the page once, and listed masked.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByTestId('new-key-name').fill('console key');
    await page.getByTestId('create-key').click();
    const key = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(key).toMatch(/^sk-\w{20,}/);
    await poll(() => page.getByTestId('keys-table').textContent()).toContain(`sk-****${key.slice(-4)}`);
    await page.screenshot({ path: join(OUTPUT, 'keys.png') });

    // A song, then two images, submitted from the page with that key.
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.getByTestId('submit-key').fill(key);
    await page.getByTestId('submit-kind').selectOption('music');
    await page.getByTestId('submit-prompt').fill('a calm piano piece for a rainy evening');
    await page.getByTestId('submit-task').click();
    const songId = (await page.getByTestId('submitted-task').locator('code').textContent()) ?? '';
    expect(songId).toMatch(/^task_/);
    expect(await statusesUntilFinal(page, songId)).toContain('completed');

    await page.getByTestId('submit-kind').selectOption('video');
    await page.getByTestId('submit-prompt').fill('a paper boat on a rainy street');
    await page.getByTestId('submit-task').click();
    await poll(() => page.getByTestId('submitted-task').locator('code').textContent()).not.toBe(songId);
    const videoId = (await page.getByTestId('submitted-task').locator('code').textContent()) ?? '';
    expect(await statusesUntilFinal(page, videoId)).toContain('completed');

    await page.getByTestId('submit-kind').selectOption('image');
    await page.getByTestId('submit-model').selectOption('anime-diffusion-4-5-full');
    await page.locator('form[data-testid="submit-task-form"] input[type="number"]').fill('2');
    await page.getByTestId('submit-prompt').fill('a red fox in fresh snow');
    await page.getByTestId('submit-task').click();
    await poll(() => page.getByTestId('submitted-task').locator('code').textContent()).not.toBe(videoId);
    const imageId = (await page.getByTestId('submitted-task').locator('code').textContent()) ?? '';

    // Live: the row moves on by itself, through a running state to completed.
    const statuses = await statusesUntilFinal(page, imageId);
    expect(statuses.at(-1)).toBe('completed');
    expect(
      statuses.some((s) => s === 'queued' || s === 'in progress'),
      statuses.join(' → '),
    ).toBe(true);

    // The submitted task is open: its two images are shown (loaded from their signed URLs), and its charge.
    const detail = page.getByTestId('task-detail');
    await poll(() => detail.getByTestId('result-image').count()).toBe(2);
    await poll(() => detail.getByTestId('result-image').evaluateAll((imgs) => imgs.every((img) => (img as unknown as LoadedImage).naturalWidth > 0))).toBe(
      true,
    );
    const imageRow = page.locator(`tr[data-task-id="${imageId}"]`);
    await poll(() => imageRow.getByTestId('task-cost').textContent()).toBe('20,000');
    await poll(() => detail.textContent()).toContain('Settled');
    await poll(() => detail.getByTestId('task-callbacks').textContent()).toContain('No completion callback');
    await poll(() => figure(page, 'used')).toBe(SPENT);
    expect(await figure(page, 'balance')).toBe(CREDIT - SPENT);
    expect(await figure(page, 'reserved')).toBe(0);
    await page.screenshot({ path: join(OUTPUT, 'tasks.png'), fullPage: true });

    // The song plays in the page: its audio element loads the result URL.
    await page.locator(`tr[data-task-id="${songId}"]`).click();
    const audio = page.getByTestId('task-detail').getByTestId('result-audio').first();
    await audio.waitFor();
    await poll(() => audio.evaluate((el) => (el as unknown as Media).readyState)).toBeGreaterThanOrEqual(1);
    expect(await audio.evaluate((el) => (el as unknown as Media).duration)).toBeGreaterThan(0);

    // The video plays in the page: its player loads the result URL (an H.264 MP4 the simulator
    // makes, served by the gateway with byte ranges), states the 4 s asked for, and once played
    // (muted, as autoplay rules allow) its clock advances, with no MediaError.
    await page.locator(`tr[data-task-id="${videoId}"]`).click();
    const video = page.getByTestId('task-detail').getByTestId('result-video');
    await video.waitFor();
    expect(await video.evaluate((el) => (el as unknown as Media).controls)).toBe(true);
    const file = await video.evaluate(async (el) => {
      const response = await fetch((el as unknown as Media).src, { headers: { range: 'bytes=0-11' } });
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        head: new TextDecoder().decode((await response.arrayBuffer()).slice(4, 8)),
      };
    });
    expect(file).toEqual({ status: 206, type: 'video/mp4', head: 'ftyp' });
    await poll(() => video.evaluate((el) => (el as unknown as Media).readyState)).toBeGreaterThanOrEqual(1);
    expect(await video.evaluate((el) => (el as unknown as Media).duration)).toBe(4);
    expect(await video.evaluate((el) => (el as unknown as Media).videoWidth)).toBeGreaterThan(0);
    await video.evaluate(async (el) => {
      const media = el as unknown as Media;
      media.muted = true;
      await media.play();
    });
    await poll(() => video.evaluate((el) => (el as unknown as Media).currentTime)).toBeGreaterThan(0.5);
    expect(await video.evaluate((el) => (el as unknown as Media).error)).toBeNull();
    await video.evaluate((el) => (el as unknown as Media).pause());

    // The ledger: the charge of the image task, and the spending chart.
    await page.getByRole('link', { name: 'Ledger' }).click();
    const settled = page.locator(`tr[data-ledger-type="QuotaSettled"][data-task-id="${imageId}"]`);
    await poll(() => settled.textContent()).toContain('−20,000');
    const bars = page.getByTestId('spending-chart').locator('rect.bar');
    await poll(async () => (await bars.evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('data-amount'))))).reduce((a, b) => a + b, 0)).toBe(SPENT);
    await page.screenshot({ path: join(OUTPUT, 'ledger.png'), fullPage: true });

    // The prices of the user's group.
    await page.getByRole('link', { name: 'Prices' }).click();
    await poll(() => page.getByTestId('prices-table').textContent()).toContain('anime-diffusion-4-5-full');

    // The webhook secret, shown and rotated.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Show' }).click();
    const before = (await page.getByTestId('webhook-secret').textContent()) ?? '';
    expect(before).toMatch(/^whsec_/);
    await page.getByTestId('rotate-secret').click();
    await poll(() => page.getByTestId('webhook-secret').textContent()).not.toBe(before);
    expect(await page.getByTestId('webhook-secret').textContent()).toMatch(/^whsec_/);

    // A disabled key is refused, also from the page; a deleted one is gone.
    await page.getByRole('link', { name: 'API keys' }).click();
    const keyRow = page.getByTestId('keys-table').locator('tbody tr').first();
    await poll(() => keyRow.textContent()).toContain('enabled');
    expect(await keyRow.textContent()).toContain('90,000');
    await keyRow.getByRole('button', { name: 'Disable' }).click();
    await poll(() => keyRow.textContent()).toContain('disabled');
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.getByTestId('submit-key').fill(key);
    await page.getByTestId('submit-task').click();
    await poll(() => page.getByTestId('submit-task-form').getByRole('alert').textContent()).toMatch(/disabled/i);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByTestId('keys-table').locator('tbody tr').first().getByRole('button', { name: 'Delete' }).click();
    await poll(() => page.getByText('No keys yet.').count()).toBe(1);

    // The overview: spending and the latest tasks.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByTestId('spending-chart').waitFor();
    await page.screenshot({ path: join(OUTPUT, 'overview.png'), fullPage: true });

    // No administration for a user.
    expect(await page.getByRole('link', { name: 'Channels' }).count()).toBe(0);
    await page.getByTestId('sign-out').click();
    await page.getByTestId('login-form').waitFor();
    await page.close();
  }, 60_000);

  it('the gateway serves the built console: the page for page paths, bundles cached for good, 404 for a missing one', async () => {
    const page = await fetch(`${gw.url}/console/admin/channels`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const bundle = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(bundle).toBeDefined();
    const js = await fetch(`${gw.url}${bundle}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    const missing = await fetch(`${gw.url}/console/assets/index-missing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found', error: { code: 'not_found' } });
  });

  it('an administrator sees the metrics, users, channels and price table', async () => {
    const page = await newPage();
    await signIn(page, 'admin', ADMIN_PASSWORD);

    await page.getByRole('link', { name: 'Metrics' }).click();
    await poll(() => page.getByTestId('metric-ready').textContent()).toContain('ready');
    await page.getByTestId('metric-dispatched').waitFor();
    await page.screenshot({ path: join(OUTPUT, 'admin-metrics.png'), fullPage: true });

    await page.getByRole('link', { name: 'Users' }).click();
    await poll(() => page.getByTestId('users-table').textContent()).toContain(user.username);

    await page.getByRole('link', { name: 'Channels' }).click();
    const channels = page.getByTestId('channels-table').locator('tbody tr[data-channel-id]');
    const listed = (await admin.get('/api/channel/')).body.data as { id: string; health?: unknown }[];
    await poll(() => channels.count()).toBe(listed.length);
    // A channel's health is shown where the API reports it.
    expect(await page.getByTestId('channel-health').count()).toBe(listed.filter((c) => c.health !== undefined).length);
    await page.screenshot({ path: join(OUTPUT, 'admin-channels.png'), fullPage: true });

    await page.getByRole('link', { name: 'Price table' }).click();
    await poll(() => page.getByTestId('admin-prices-table').textContent()).toContain('Vid-H3');

    // The session ends under the page (signed out elsewhere): the next call shows the login form.
    expect(await page.evaluate(async () => (await fetch('/api/user/logout', { method: 'POST' })).status)).toBe(200);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByTestId('login-form').waitFor();
    await page.close();
  }, 60_000);

  it('no page had a script error or a content security policy violation', () => {
    expect(pageProblems).toEqual([]);
  });
});
