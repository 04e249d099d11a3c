/**
 * The web console in a real browser (Debian's chromium, headless, driven by playwright-core)
 * against the assembled gateway: a user signs in, creates an API key and reads it off the page,
 * submits tasks with it from the page and watches them complete live (the event stream, no
 * reload), sees the images, the song playable, the video playing, the charge on the task, in the figures and in the
 * ledger with its chart, and rotates the webhook secret; an administrator sees the users,
 * channels, price table and metrics. An administrator manages a user in the users page (disables
 * them with a reason — their key is refused at once — enables them, resets their password,
 * debits them with a reason, revokes their key, changes their group, deletes another after a
 * confirm step), each refusal of the API shown as the API words it; the user changes their own
 * password on the Account page and sees their sessions, and finds the debit with its reason in
 * their ledger. A task just submitted is shown queued or in progress first and never completed
 * without its results (every render of its row recorded in the page). A user makes a key with a
 * rate limit and an IP allow-list and edits keys (each change holds on the key's next request: 403
 * ip_not_allowed, 429 rate_limited, 403 token_disabled), and sees their usage by model and by key
 * with exact totals; an administrator filters the task log across users and downloads it as CSV,
 * sees the usage of one user and of everyone, and an events figure that claims no more than the
 * page saw. The pages touched fit a phone's width (360 px). Screenshots go to
 * test/console/output/.
 *
 * Chromium is required, never skipped: CHROMIUM_PATH, else `chromium` on the PATH (CI installs
 * it: .ci/run).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from '../support/chromium.js';
import { adminClient, ADMIN_PASSWORD, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

const OUTPUT = resolve('test/console/output');

/**
 * Records, in the page, every status the tasks' rows show and how many results the open task's
 * detail shows at that moment: a MutationObserver sees each render, however brief (reading every
 * 25 ms from the test can miss a state shown for a few milliseconds).
 */
async function recordStatuses(page: Page): Promise<void> {
  await page.evaluate(() => {
    type El = {
      getAttribute(n: string): string | null;
      querySelector(s: string): El | null;
      querySelectorAll(s: string): ArrayLike<El>;
      textContent: string | null;
    };
    const g = globalThis as unknown as {
      document: El & { body: unknown };
      MutationObserver: new (cb: () => void) => { observe(target: unknown, options: Record<string, boolean>): void };
      statusLog?: { id: string; status: string; results: number }[];
    };
    if (g.statusLog) return;
    const log: { id: string; status: string; results: number }[] = (g.statusLog = []);
    const last = new Map<string, string>();
    const read = () => {
      for (const row of Array.from(g.document.querySelectorAll('tr[data-task-id]'))) {
        const id = row.getAttribute('data-task-id') ?? '';
        const status = row.querySelector('[data-testid="task-status"]')?.textContent ?? '';
        const results = g.document.querySelectorAll(`tr.detail-row [data-testid="task-results"] > *`).length;
        const detailOf = g.document.querySelector('[data-testid="task-detail"] dd code')?.textContent;
        const key = `${status}/${detailOf === id ? results : -1}`;
        if (last.get(id) === key) continue;
        last.set(id, key);
        log.push({ id, status, results: detailOf === id ? results : -1 });
      }
    };
    new g.MutationObserver(read).observe(g.document.body, { childList: true, subtree: true, characterData: true });
  });
}

/** The statuses (with the open detail's result count) the page showed for a task, in order. */
async function statusLog(page: Page, taskId: string): Promise<{ status: string; results: number }[]> {
  const log = await page.evaluate(() => (globalThis as unknown as { statusLog?: { id: string; status: string; results: number }[] }).statusLog ?? []);
  return log.filter((e) => e.id === taskId).map(({ status, results }) => ({ status, results }));
}

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
/** The user-administration tests sign one user in (and get refused) more than the default 10 times a minute. */
const LOGIN_LIMITS = { LOGIN_RATE_LIMIT_PER_USER: '30', LOGIN_RATE_LIMIT: '60' };
const CREDIT = 1_000_000;
/** Two `anime` images at 10,000 each, a song at 50,000, 4 s of Vid-H3 at 5,000 (the embedded default's prices). */
const IMAGE_COST = 20_000;
const SONG_COST = 50_000;
const VIDEO_COST = 20_000;
const SPENT = IMAGE_COST + SONG_COST + VIDEO_COST;

let gw: TestGateway;
let admin: Client;
let user: Awaited<ReturnType<typeof newUser>>;
let browser: Browser;

beforeAll(async () => {
  // The console as `npm run console:build` builds it, into console/dist, which the gateway serves.
  const build = spawnSync(resolve('node_modules/.bin/vite'), ['build', 'console', '--logLevel', 'warn'], { encoding: 'utf8' });
  expect(build.status, `console build failed:\n${build.stdout}\n${build.stderr}`).toBe(0);
  mkdirSync(OUTPUT, { recursive: true });
  [gw, browser] = await Promise.all([
    startGateway({ ...ENGINE, ...LOGIN_LIMITS }),
    chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] }),
  ]);
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

/** A plain request with an API key, as any client makes it: the status and the error's code. */
async function keyAnswer(key: string): Promise<{ status: number; code: string | undefined }> {
  const response = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { code?: string };
  return { status: response.status, code: body.code };
}

/** Signing in over HTTP: the status and the envelope's code (a session it starts is ended again). */
async function loginAnswer(username: string, password: string): Promise<{ status: number; code: string | undefined }> {
  const client = new Client(gw.url);
  const reply = await client.post('/api/user/login', { username, password });
  if (reply.status === 200) await client.post('/api/user/logout');
  return { status: reply.status, code: (reply.body as { code?: string }).code };
}

const FULL = 'anime-diffusion-4-5-full';
const CURATED = 'anime-diffusion-4-5-curated';

/** An async image task submitted with an API key, as any client does: its id. */
async function submitImage(key: string, model: string, n = 1): Promise<string> {
  const reply = await new Client(gw.url, key).post('/v1/images/async/generations', { model, prompt: 'a lighthouse at dusk', n });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return String((reply.body as { id: string }).id);
}

/** At a phone's width (360 px) the page has no sideways scrolling, neither the page nor any card. */
async function fitsPhone(page: Page, screenshot: string): Promise<void> {
  const viewport = page.viewportSize();
  await page.setViewportSize({ width: 360, height: 780 });
  await poll(() =>
    page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth),
  ).toBeLessThanOrEqual(360);
  const overflowing = await page
    .locator('.card')
    .evaluateAll((cards) => cards.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.querySelector('h2')?.textContent ?? '?'));
  expect(overflowing, 'cards wider than a phone').toEqual([]);
  await page.screenshot({ path: join(OUTPUT, screenshot), fullPage: true });
  if (viewport) await page.setViewportSize(viewport);
}

/** The user the administrator manages, and what the two tests below share of them. */
const RESET_PASSWORD = 'reset-by-admin-2';
const OWN_PASSWORD = 'chosen-by-user-3';
const DEBIT = 2_500;
const DEBIT_REASON = 'duplicate credit of 12 May reversed';
let managed: Awaited<ReturnType<typeof newUser>>;

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
    await recordStatuses(page);
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
    // Every task just submitted was first shown queued or in progress, and never completed without
    // its results (the detail is open on it from the submit on): all it showed, render by render.
    for (const id of [songId, videoId, imageId]) {
      const shown = await statusLog(page, id);
      expect(['queued', 'in progress'], `${id}: ${JSON.stringify(shown)}`).toContain(shown[0]?.status);
      expect(
        shown.filter((s) => s.status === 'completed' && s.results === 0),
        `${id} shown completed without results: ${JSON.stringify(shown)}`,
      ).toEqual([]);
      expect(shown.some((s) => s.status === 'completed' && s.results > 0)).toBe(true);
    }
    await poll(() => detail.getByTestId('task-callbacks').textContent()).toContain('No completion callback');
    await poll(() => figure(page, 'used')).toBe(SPENT);
    expect(await figure(page, 'balance')).toBe(CREDIT - SPENT);
    expect(await figure(page, 'reserved')).toBe(0);
    await page.screenshot({ path: join(OUTPUT, 'tasks.png'), fullPage: true });
    await fitsPhone(page, 'tasks-phone.png');

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

  it('a user makes a key with a rate limit and an IP allow-list in the form, and edits keys; each change holds on the next request, and refusals read as the API words them', async () => {
    const owner = await newUser(admin);
    const page = await newPage();
    await signIn(page, owner.username, owner.password);
    await page.getByRole('link', { name: 'API keys' }).click();
    const tokens = async () => ((await owner.client.get('/api/token/?size=100')).body as { data: { items: Record<string, unknown>[] } }).data.items;

    // An allow-list entry that is no address: refused with the API's message, nothing made.
    const badIps = await owner.client.post('/api/token/', { name: 'bad', allow_ips: 'not-an-ip' });
    expect(badIps.status).toBe(400);
    await page.getByTestId('new-key-name').fill('office key');
    await page.getByTestId('new-key-ips').fill('not-an-ip');
    await page.getByTestId('create-key').click();
    await poll(() => page.getByTestId('new-key-form').getByRole('alert').textContent()).toBe((badIps.body as { message: string }).message);
    expect(await tokens()).toEqual([]);

    // Three requests a minute, from two networks the test is not in.
    await page.getByTestId('new-key-rate').fill('3');
    await page.getByTestId('new-key-ips').fill('10.0.0.0/8,\n192.168.1.7');
    await page.getByTestId('create-key').click();
    const key = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(key).toMatch(/^sk-\w{20,}/);
    const [record] = await tokens();
    expect(record).toMatchObject({ name: 'office key', rate_limit_per_minute: 3, allow_ips: ['10.0.0.0/8', '192.168.1.7'], status: 1, unlimited_quota: true });
    const row = page.locator(`tr[data-token-id="${String(record!.id)}"]`);
    await poll(() => row.getByTestId('key-rate').textContent()).toBe('3 / min');
    expect(await row.getByTestId('key-ips').textContent()).toBe('10.0.0.0/8, 192.168.1.7');
    // Used from here (127.0.0.1): refused, and counted in the key's minute.
    expect(await keyAnswer(key)).toEqual({ status: 403, code: 'ip_not_allowed' });
    await page.screenshot({ path: join(OUTPUT, 'keys-limits.png'), fullPage: true });

    // Edited: this machine allowed; the key works, until its third request of the minute.
    await row.getByTestId('edit-key').click();
    const edit = page.locator(`tr[data-edit-of="${String(record!.id)}"]`);
    expect(await edit.getByTestId('edit-key-ips').inputValue()).toBe('10.0.0.0/8\n192.168.1.7');
    expect(await edit.getByTestId('edit-key-rate').inputValue()).toBe('3');
    await edit.getByTestId('edit-key-ips').fill('127.0.0.1\n::1');
    await edit.getByTestId('save-key').click();
    await poll(() => row.getByTestId('key-ips').textContent()).toBe('127.0.0.1, ::1');
    expect(await edit.count()).toBe(0);
    expect(await keyAnswer(key)).toEqual({ status: 200, code: undefined });
    expect(await keyAnswer(key)).toEqual({ status: 200, code: undefined });
    expect(await keyAnswer(key)).toEqual({ status: 429, code: 'rate_limited' });

    // A refusal of an edit, as the API words it: an expiry in the past.
    const past = await owner.client.put('/api/token/', { id: record!.id, expired_time: 978_307_200 });
    expect([past.status, (past.body as { code?: string }).code]).toEqual([400, 'invalid_request']);
    await row.getByTestId('edit-key').click();
    await edit.getByTestId('edit-key-expires').fill('2001-01-01T00:00');
    await edit.getByTestId('save-key').click();
    await poll(() => edit.getByRole('alert').textContent()).toBe((past.body as { message: string }).message);
    await page.screenshot({ path: join(OUTPUT, 'keys-edit.png'), fullPage: true });
    await fitsPhone(page, 'keys-phone.png');

    // Renamed, disabled, capped at 500, back to the gateway's rate limit and no expiry: the row
    // says so, the record holds it, and the key's next request is refused as disabled.
    await edit.getByTestId('edit-key-expires').fill('');
    await edit.getByTestId('edit-key-name').fill('office key (retired)');
    await edit.getByTestId('edit-key-status').selectOption('2');
    await edit.getByTestId('edit-key-limit').fill('500');
    await edit.getByTestId('edit-key-rate').fill('');
    await edit.getByTestId('save-key').click();
    await poll(() => row.getByTestId('key-status').textContent()).toBe('disabled');
    expect(await row.getByTestId('key-name').textContent()).toBe('office key (retired)');
    expect(await row.getByTestId('key-left').textContent()).toBe('500');
    expect(await row.getByTestId('key-rate').textContent()).toBe('default');
    expect((await tokens())[0]).toMatchObject({
      name: 'office key (retired)',
      status: 2,
      unlimited_quota: false,
      remain_quota: 500,
      rate_limit_per_minute: null,
      expired_time: -1,
      allow_ips: ['127.0.0.1', '::1'],
    });
    expect(await keyAnswer(key)).toEqual({ status: 403, code: 'token_disabled' });
    await page.close();
  }, 60_000);

  it('a user sees their usage by model and by key on the overview, charts as wide as their card, by day or by hour; an administrator sees it for that user and for everyone', async () => {
    const spender = await newUser(admin, { credit: 200_000 });
    const [alpha, beta] = await Promise.all([newToken(spender.client, { name: 'alpha' }), newToken(spender.client, { name: 'beta' })]);
    const page = await newPage();
    await signIn(page, spender.username, spender.password);
    const usage = page.getByTestId('usage');
    await poll(() => usage.getByText('Nothing charged in this range.').count()).toBe(2);

    // Two keys: alpha two images of one model and one of another, beta one (10,000 an image).
    await Promise.all([submitImage(alpha.key, FULL, 2), submitImage(alpha.key, CURATED), submitImage(beta.key, CURATED)]);
    const byModel = usage.getByTestId('usage-by-model');
    const byKey = usage.getByTestId('usage-by-key');
    /** A totals table as [key, name, tasks, charged] rows, then its "All" row. */
    const totals = (block: typeof byModel) =>
      block
        .getByTestId('usage-totals')
        .locator('tbody tr, tfoot tr')
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.getAttribute('data-usage-key'),
            ...Array.from(r.querySelectorAll('td'), (td) => (td as { textContent: string | null }).textContent),
          ]),
        );
    // Filled as the charges land (the live stream), no reload.
    await poll(() => totals(byKey)).toEqual([
      [alpha.id, 'alpha', '2', '30,000'],
      [beta.id, 'beta', '1', '10,000'],
      [null, 'All', '3', '40,000'],
    ]);
    await poll(() => totals(byModel)).toEqual([
      [CURATED, CURATED, '2', '20,000'],
      [FULL, FULL, '1', '20,000'],
      [null, 'All', '3', '40,000'],
    ]);
    // The bars hold the same sums, series by series.
    const bars = (block: typeof byModel) =>
      block.locator('rect.segment').evaluateAll((rects) =>
        rects.reduce<Record<string, number>>((sums, r) => {
          const series = r.getAttribute('data-series') ?? '?';
          sums[series] = (sums[series] ?? 0) + Number(r.getAttribute('data-amount'));
          return sums;
        }, {}),
      );
    expect(await bars(byKey)).toEqual({ [alpha.id]: 30_000, [beta.id]: 10_000 });
    expect(await bars(byModel)).toEqual({ [CURATED]: 20_000, [FULL]: 20_000 });
    // Each chart fills its block, and the spending chart its card (it was 640 units, at most 760 px).
    for (const block of [byModel, byKey]) {
      const [chart, box] = await Promise.all([block.locator('svg[role="img"]').boundingBox(), block.boundingBox()]);
      expect(Math.abs(chart!.width - box!.width)).toBeLessThanOrEqual(1);
    }
    const spending = await page.getByTestId('spending-chart').locator('svg').boundingBox();
    const spendingCard = await page.locator('.card', { has: page.getByTestId('spending-chart') }).boundingBox();
    expect(spending!.width).toBeGreaterThan(spendingCard!.width - 40);
    expect(spending!.width).toBeGreaterThan(760);
    await page.screenshot({ path: join(OUTPUT, 'overview-usage.png'), fullPage: true });

    // By the hour over the last day: the same totals.
    await usage.getByTestId('usage-hours').click();
    await poll(() => byKey.locator('svg[role="img"]').getAttribute('aria-label')).toMatch(/^Charged per hour by key/);
    expect(await totals(byKey)).toEqual([
      [alpha.id, 'alpha', '2', '30,000'],
      [beta.id, 'beta', '1', '10,000'],
      [null, 'All', '3', '40,000'],
    ]);
    await fitsPhone(page, 'overview-usage-phone.png');
    await page.close();

    // The administrator: that user's usage, the same; everyone's holds it.
    const adminPage = await newPage();
    await signIn(adminPage, 'admin', ADMIN_PASSWORD);
    await adminPage.getByRole('link', { name: 'Usage' }).click();
    const adminUsage = adminPage.getByTestId('usage');
    await poll(() => adminUsage.locator('h2').textContent()).toBe("Everyone's usage");
    const everyoneByKey = adminUsage.getByTestId('usage-by-key');
    await poll(async () => (await totals(everyoneByKey)).find((row) => row[0] === alpha.id)).toEqual([alpha.id, 'alpha', '2', '30,000']);
    await adminPage.getByTestId('usage-user').selectOption(spender.userId);
    await poll(() => adminUsage.locator('h2').textContent()).toBe(`Usage of ${spender.username}`);
    await poll(() => totals(adminUsage.getByTestId('usage-by-model'))).toEqual([
      [CURATED, CURATED, '2', '20,000'],
      [FULL, FULL, '1', '20,000'],
      [null, 'All', '3', '40,000'],
    ]);
    expect(await totals(adminUsage.getByTestId('usage-by-key'))).toEqual([
      [alpha.id, 'alpha', '2', '30,000'],
      [beta.id, 'beta', '1', '10,000'],
      [null, 'All', '3', '40,000'],
    ]);
    await adminPage.screenshot({ path: join(OUTPUT, 'admin-usage.png'), fullPage: true });
    await fitsPhone(adminPage, 'admin-usage-phone.png');
    await adminPage.close();
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
    // The page's clock, moved a minute on below (it runs as usual until then).
    await page.clock.install();
    await signIn(page, 'admin', ADMIN_PASSWORD);

    await page.getByRole('link', { name: 'Metrics' }).click();
    await poll(() => page.getByTestId('metric-ready').textContent()).toContain('ready');
    await page.getByTestId('metric-dispatched').waitFor();

    // The events figure claims no more than the page saw: until the stream has been open a minute
    // it counts the events since the page opened and says so; then the last minute's.
    const events = page.getByTestId('metric-events');
    const eventCount = async () => Number(await events.locator('.figure-value').textContent());
    await poll(() => events.locator('.figure-label').textContent()).toMatch(/^events since the page opened \(\d+ s ago\)$/);
    const before = await eventCount();
    await admin.post('/api/admin/credits', { user_id: user.userId, amount: 1, note: 'seen on the metrics page' });
    await poll(eventCount).toBe(before + 1);
    await page.screenshot({ path: join(OUTPUT, 'admin-metrics.png'), fullPage: true });
    await page.clock.fastForward(61_000);
    await poll(() => events.locator('.figure-label').textContent()).toBe('events in the last minute');
    // The credit arrived over a minute ago: out of the window; the next one is in it.
    expect(await eventCount()).toBe(0);
    await admin.post('/api/admin/credits', { user_id: user.userId, amount: 1, note: 'seen on the metrics page' });
    await poll(eventCount).toBe(1);
    await fitsPhone(page, 'admin-metrics-phone.png');

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

  it('an administrator filters the task log across users by model and by user, and downloads it as CSV with the same filters', async () => {
    // Two users' tasks of a model no other test submits, and one of another model.
    const MODEL = 'vis-imagine-2.0';
    const [ann, bob] = await Promise.all([newUser(admin, { credit: 100_000 }), newUser(admin, { credit: 100_000 })]);
    const [annKey, bobKey] = await Promise.all([newToken(ann.client, { name: 'ann key' }), newToken(bob.client, { name: 'bob key' })]);
    const annTask = await submitImage(annKey.key, MODEL);
    const annOther = await submitImage(annKey.key, FULL);
    const bobTask = await submitImage(bobKey.key, MODEL);

    const page = await newPage();
    await signIn(page, 'admin', ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Task log' }).click();
    const rows = page.getByTestId('task-log-table').locator('tbody tr');
    await poll(() => rows.count()).toBeGreaterThanOrEqual(3);
    const ids = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-task-id')));
    expect(await ids()).toEqual(expect.arrayContaining([annTask, annOther, bobTask]));

    // By model: that model's tasks of the two users, and nothing else.
    await page.getByTestId('filter-model').fill(MODEL);
    await page.getByTestId('apply-filters').click();
    await poll(async () => (await ids()).sort()).toEqual([annTask, bobTask].sort());
    expect(await rows.getByTestId('task-model').allTextContents()).toEqual([MODEL, MODEL]);
    expect((await rows.getByTestId('task-user').allTextContents()).sort()).toEqual([ann.username, bob.username].sort());
    expect(await page.locator(`tr[data-task-id="${annTask}"]`).textContent()).toContain(annKey.id);
    expect(await page.getByTestId('task-log-total').textContent()).toBe('2 in all');

    // The CSV of the same filters: a header row and the two tasks.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
    expect(download.suggestedFilename()).toMatch(/^tasks-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = readFileSync(await download.path(), 'utf8')
      .trim()
      .split(/\r?\n/);
    expect(lines[0]).toBe('id,created_at,completed_at,status,account_id,token_id,family,action,model,channel_id,reserved,charged,error_code,prompt');
    const records = lines.slice(1).map((line) => line.split(','));
    expect(records.map((r) => r[0]).sort()).toEqual([annTask, bobTask].sort());
    expect(records.map((r) => r[8])).toEqual([MODEL, MODEL]);
    expect(records.map((r) => r[4]).sort()).toEqual([ann.accountId, bob.accountId].sort());
    await page.screenshot({ path: join(OUTPUT, 'admin-tasks.png'), fullPage: true });

    // And by user: one user's tasks of that model; the CSV link follows.
    await page.getByTestId('filter-user').selectOption(ann.userId);
    await page.getByTestId('apply-filters').click();
    await poll(ids).toEqual([annTask]);
    const href = (await page.getByTestId('download-csv').getAttribute('href')) ?? '';
    expect(href).toContain(`user_id=${ann.userId}`);
    const csv = await admin.get(href);
    expect(
      String(csv.body)
        .trim()
        .split(/\r?\n/)
        .slice(1)
        .map((l) => l.split(',')[0]),
    ).toEqual([annTask]);
    await fitsPhone(page, 'admin-tasks-phone.png');

    // By the day created, in the reader's days: from today, still there; from tomorrow, none.
    const day = (offset: number) =>
      page.evaluate((n) => {
        const d = new Date(Date.now() + n * 86_400_000);
        return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
      }, offset);
    await page.getByTestId('filter-from').fill(await day(0));
    await page.getByTestId('apply-filters').click();
    await poll(() => page.getByTestId('download-csv').getAttribute('href')).toContain('from=');
    await poll(ids).toEqual([annTask]);
    await page.getByTestId('filter-from').fill(await day(1));
    await page.getByTestId('apply-filters').click();
    await poll(() => page.getByTestId('task-log').getByText('No task matches.').count()).toBe(1);
    await page.close();
  }, 60_000);

  it('an administrator disables, enables, resets the password of, debits and revokes the key of a user in the users page; each takes effect at once', async () => {
    managed = await newUser(admin, { credit: 100_000 });
    const { key } = await newToken(managed.client, { name: 'managed key' });
    expect(await keyAnswer(key)).toEqual({ status: 200, code: undefined });
    const adminId = ((await admin.get('/api/user/self')).body as { data: { id: string } }).data.id;

    const page = await newPage();
    await signIn(page, 'admin', ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Users' }).click();
    const row = page.locator(`tr[data-user-id="${managed.userId}"]`);
    const status = row.getByTestId('user-status');
    await poll(() => status.textContent()).toBe('enabled');
    expect(await row.getByTestId('user-available').textContent()).toBe('100,000');
    expect(await row.getByTestId('user-used').textContent()).toBe('0');
    expect(await row.getByTestId('user-reserved').textContent()).toBe('0');
    await row.getByTestId('manage-user').click();
    const panel = page.locator(`tr[data-detail-of="${managed.userId}"]`);

    // The user is signed in to the console too.
    const userPage = await newPage();
    await signIn(userPage, managed.username, managed.password);

    // Disabled with a reason: the row says so, and the user's key is refused at once; their
    // sessions end (the console shows the login form), and signing in again is refused.
    await panel.getByTestId('disable-reason').fill('chargeback under review');
    await panel.getByTestId('disable-user').click();
    await poll(() => status.textContent()).toBe('disabled');
    expect(await row.getByTestId('user-disabled-reason').textContent()).toBe('chargeback under review');
    expect(await keyAnswer(key)).toEqual({ status: 403, code: 'user_disabled' });
    expect((await managed.client.get('/api/user/self')).status).toBe(401);
    const refusedLogin = await new Client(gw.url).post('/api/user/login', { username: managed.username, password: managed.password });
    expect([refusedLogin.status, (refusedLogin.body as { code?: string }).code]).toEqual([403, 'user_disabled']);
    await page.screenshot({ path: join(OUTPUT, 'admin-user-disabled.png'), fullPage: true });
    await userPage.getByRole('link', { name: 'Ledger' }).click();
    await userPage.getByTestId('login-form').waitFor();
    await userPage.getByTestId('login-username').fill(managed.username);
    await userPage.getByTestId('login-password').fill(managed.password);
    await userPage.getByTestId('login-submit').click();
    await poll(() => userPage.getByTestId('login-form').getByRole('alert').textContent()).toBe((refusedLogin.body as { message: string }).message);
    await userPage.close();

    // Enabled again: the key works again, and the user signs in.
    await panel.getByTestId('enable-user').click();
    await poll(() => status.textContent()).toBe('enabled');
    expect(await row.getByTestId('user-disabled-reason').count()).toBe(0);
    expect(await keyAnswer(key)).toEqual({ status: 200, code: undefined });
    await managed.client.login(managed.username, managed.password);
    expect((await managed.client.get('/api/user/self')).status).toBe(200);

    // A refusal is shown as the API words it: an administrator cannot disable themselves.
    const refusal = await admin.post(`/api/user/${adminId}/disable`, { reason: 'no' });
    expect([refusal.status, (refusal.body as { code?: string }).code]).toEqual([409, 'cannot_change_self']);
    const adminRow = page.locator(`tr[data-user-id="${adminId}"]`);
    await adminRow.getByTestId('manage-user').click();
    const adminPanel = page.locator(`tr[data-detail-of="${adminId}"]`);
    await adminPanel.getByTestId('disable-user').click();
    await poll(() => adminPanel.getByRole('alert').textContent()).toBe((refusal.body as { message: string }).message);
    expect(await adminRow.getByTestId('user-status').textContent()).toBe('enabled');
    await row.getByTestId('manage-user').click();

    // A new password: the user's sessions end, the old password is refused, the new one signs in.
    await panel.getByTestId('reset-password').fill(RESET_PASSWORD);
    await panel.getByTestId('reset-password-submit').click();
    await poll(() => panel.getByTestId('reset-password-form').getByRole('status').textContent()).toContain('Password reset');
    expect((await managed.client.get('/api/user/self')).status).toBe(401);
    expect(await loginAnswer(managed.username, managed.password)).toEqual({ status: 401, code: 'invalid_credentials' });
    expect((await loginAnswer(managed.username, RESET_PASSWORD)).status).toBe(200);

    // A debit beyond what is available is refused, with the API's message; one within it moves
    // the row's figures and shows in the user's movements with its reason.
    await panel.getByTestId('debit-amount').fill('1000000');
    await panel.getByTestId('debit-reason').fill('too much');
    await panel.getByTestId('debit-submit').click();
    const tooMuch = await admin.post('/api/admin/debits', { user_id: managed.userId, amount: 1_000_000, reason: 'too much' });
    expect([tooMuch.status, (tooMuch.body as { code?: string }).code]).toEqual([402, 'insufficient_quota']);
    await poll(() => panel.getByTestId('debit-form').getByRole('alert').textContent()).toBe((tooMuch.body as { message: string }).message);
    await panel.getByTestId('debit-amount').fill(String(DEBIT));
    await panel.getByTestId('debit-reason').fill(DEBIT_REASON);
    await panel.getByTestId('debit-submit').click();
    await poll(() => row.getByTestId('user-available').textContent()).toBe('97,500');
    expect(await row.getByTestId('user-balance').textContent()).toBe('97,500');
    const debitRow = panel.getByTestId('user-ledger').locator('tr[data-ledger-type="QuotaDebited"]');
    await poll(() => debitRow.getByTestId('ledger-note').textContent()).toBe(DEBIT_REASON);
    expect(await debitRow.textContent()).toContain('−2,500');

    // The user's key, listed and revoked (asked first): refused from then on.
    const keyRow = panel.getByTestId('user-keys').locator('tbody tr');
    await poll(() => keyRow.textContent()).toContain(`sk-****${key.slice(-4)}`);
    await keyRow.getByTestId('revoke-key').click();
    await poll(() => panel.getByText('No keys.').count()).toBe(1);
    expect((await keyAnswer(key)).status).toBe(401);

    // Another group.
    await panel.getByTestId('user-group-input').fill('vip');
    await panel.getByTestId('change-group').click();
    await poll(() => row.getByTestId('user-group').textContent()).toBe('vip');

    // The row follows the live stream: a credit made elsewhere shows without a click (made once
    // the reads the group change started are over).
    await page.waitForTimeout(1_500);
    await admin.post('/api/admin/credits', { user_id: managed.userId, amount: 500, note: 'made elsewhere' });
    await poll(() => row.getByTestId('user-available').textContent()).toBe('98,000');
    await poll(() => panel.getByTestId('user-ledger').locator('tr[data-ledger-type="QuotaCredited"]').first().textContent()).toContain('made elsewhere');
    await page.screenshot({ path: join(OUTPUT, 'admin-users.png'), fullPage: true });
    await fitsPhone(page, 'admin-users-phone.png');

    // Deleting asks first, in the page; then the user is gone for good.
    const doomed = await newUser(admin);
    const doomedKey = (await newToken(doomed.client)).key;
    await page.getByRole('button', { name: 'Refresh' }).click();
    const doomedRow = page.locator(`tr[data-user-id="${doomed.userId}"]`);
    await doomedRow.getByTestId('manage-user').click();
    const doomedPanel = page.locator(`tr[data-detail-of="${doomed.userId}"]`);
    await doomedPanel.getByTestId('delete-user').click();
    expect(await doomedRow.getByTestId('user-status').textContent()).toBe('enabled');
    await doomedPanel.getByTestId('confirm-delete').click();
    await poll(() => doomedRow.getByTestId('user-status').textContent()).toBe('deleted');
    expect(await loginAnswer(doomed.username, doomed.password)).toEqual({ status: 401, code: 'invalid_credentials' });
    expect(await keyAnswer(doomedKey)).toEqual({ status: 401, code: 'invalid_api_key' });
    await page.close();
  }, 60_000);

  it('a user changes their own password on the Account page, sees their sessions, and finds the debit with its reason in their ledger', async () => {
    // Signed in twice: elsewhere (over HTTP) and in the page.
    const elsewhere = new Client(gw.url);
    await elsewhere.login(managed.username, RESET_PASSWORD);
    const page = await newPage();
    await signIn(page, managed.username, RESET_PASSWORD);
    await page.getByRole('link', { name: 'Account' }).click();
    const sessions = page.getByTestId('sessions-table').locator('tbody tr');
    await poll(() => sessions.count()).toBe(2);
    const listed = ((await elsewhere.get('/api/user/self/sessions')).body as { data: { id: string; current: boolean }[] }).data;
    const inPage = await sessions.evaluateAll((rows) =>
      rows.map((r) => ({ id: r.getAttribute('data-session-id'), current: r.getAttribute('data-current') === 'true' })),
    );
    // The page's current session is the one the other client does not call its own.
    const elsewhereId = listed.find((s) => s.current)?.id;
    expect(inPage.map((s) => s.id).sort()).toEqual(listed.map((s) => s.id).sort());
    expect(inPage.filter((s) => s.current).map((s) => s.id)).toEqual(listed.filter((s) => s.id !== elsewhereId).map((s) => s.id));
    expect(await page.getByTestId('current-session').count()).toBe(1);

    // A wrong current password: the API's refusal, shown as it words it.
    const form = page.getByTestId('change-password-form');
    const wrong = await elsewhere.post('/api/user/self/password', { old_password: 'not-my-password', new_password: OWN_PASSWORD });
    expect([wrong.status, (wrong.body as { code?: string }).code]).toEqual([403, 'wrong_password']);
    await page.getByTestId('old-password').fill('not-my-password');
    await page.getByTestId('new-password').fill(OWN_PASSWORD);
    await page.getByTestId('repeat-password').fill(OWN_PASSWORD);
    await page.getByTestId('change-password').click();
    await poll(() => form.getByRole('alert').textContent()).toBe((wrong.body as { message: string }).message);

    // The right one: changed; the other session ends, this one stays (the only one listed).
    await page.getByTestId('old-password').fill(RESET_PASSWORD);
    await page.getByTestId('change-password').click();
    await page.getByTestId('password-changed').waitFor();
    await poll(() => sessions.count()).toBe(1);
    expect(await sessions.first().getAttribute('data-current')).toBe('true');
    expect((await elsewhere.get('/api/user/self')).status).toBe(401);
    expect(await loginAnswer(managed.username, RESET_PASSWORD)).toEqual({ status: 401, code: 'invalid_credentials' });
    expect((await loginAnswer(managed.username, OWN_PASSWORD)).status).toBe(200);
    await page.screenshot({ path: join(OUTPUT, 'account.png'), fullPage: true });
    await fitsPhone(page, 'account-phone.png');

    // The administrator's debit, in the user's own statement with its reason.
    await page.getByRole('link', { name: 'Ledger' }).click();
    const debit = page.getByTestId('ledger-table').locator('tr[data-ledger-type="QuotaDebited"]');
    await poll(() => debit.getByTestId('ledger-note').textContent()).toBe(DEBIT_REASON);
    expect(await debit.textContent()).toContain('−2,500');
    expect(await debit.textContent()).toContain('Debited');
    await page.screenshot({ path: join(OUTPUT, 'ledger-debit.png'), fullPage: true });
    await fitsPhone(page, 'ledger-phone.png');
    await page.close();
  }, 60_000);

  it('no page had a script error or a content security policy violation', () => {
    expect(pageProblems).toEqual([]);
  });
});
