/**
 * Usage you can see, on the assembled gateway with its simulator: two keys of one user and a key
 * of another submit images (some `[sim:fail]`, which charge nothing), then
 * - `GET /api/usage` by model and by key, per hour and per day, has the exact sums (the hours
 *   are checked against the settlements' own times in the ledger, so a run across an hour's or a
 *   day's end passes too);
 * - `GET /api/admin/usage` sums both users, or one with `user_id`; non-administrators are refused;
 * - bad `group_by`, `bucket`, `from`, `to` are refused naming the field;
 * - every ledger row names its key (`token_id`, `token_name`), model and task, releases included;
 * - the CSV statement parses back to the JSON statement's rows;
 * - a restarted gateway answers the same usage, and so does one that rebuilt the usage view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VIEWS } from '../../projections/views.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';
import { parseCsv } from '../support/csv.js';
import { tempDir } from '../support/tmp.js';

const FULL = 'anime-diffusion-4-5-full';
const CURATED = 'anime-diffusion-4-5-curated';
/** Both anime models cost 10,000 per image. */
const PER_IMAGE = 10_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const dir = tempDir();
let gw: TestGateway;
let admin: Client;
type User = Awaited<ReturnType<typeof newUser>>;
let one: User;
let two: User;
let keyA: { id: string; key: string };
let keyB: { id: string; key: string };
let keyC: { id: string; key: string };
/** A range of whole UTC days around now, the same for every call (and after the restart). */
let range: { from: string; to: string };

interface LedgerRow {
  id: string;
  type: string;
  at: string;
  task_id: string | null;
  reservation_id: string | null;
  model: string | null;
  token_id: string | null;
  token_name: string | null;
  amount: number;
  [field: string]: unknown;
}

async function submit(key: string, model: string, prompt: string, n = 1): Promise<string> {
  const api = new Client(gw.url, key);
  const r = await api.post('/v1/images/async/generations', { model, prompt, n });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  await waitForImageTask(api, r.body.id);
  return r.body.id as string;
}

const ledgerOf = async (client: Client, query = ''): Promise<LedgerRow[]> => {
  const r = await client.get(`/api/billing/ledger?size=500${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.items;
};

/** Every task of the user settled or released in the ledger, and every view caught up. */
async function settled(user: User, settlements: number, releases: number): Promise<void> {
  await eventually(async () => {
    const rows = await ledgerOf(user.client);
    const count = (type: string) => rows.filter((r) => r.type === type).length;
    return count('QuotaSettled') === settlements && count('QuotaReleased') === releases ? true : undefined;
  });
  await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
}

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE, { dataDir: dir.path, keepData: true });
  admin = await adminClient(gw);
  one = await newUser(admin, { credit: 1_000_000 });
  two = await newUser(admin, { credit: 1_000_000 });
  keyA = await newToken(one.client, { name: 'key-a' });
  keyB = await newToken(one.client, { name: 'key-b' });
  keyC = await newToken(two.client, { name: 'key-c' });
  // A note that needs quoting in CSV: a comma, quotes, a line break.
  expect((await admin.post('/api/admin/credits', { user_id: one.userId, amount: 5, note: 'goodwill, "sorry"\nsecond line' })).status).toBe(200);
  await Promise.all([
    submit(keyA.key, FULL, 'two foxes', 2),
    submit(keyA.key, CURATED, 'a curated fox'),
    submit(keyA.key, FULL, 'no luck [sim:fail]'),
    submit(keyB.key, FULL, 'a fox from b'),
    submit(keyB.key, CURATED, 'no luck either [sim:fail]'),
    submit(keyC.key, FULL, 'a fox of user two'),
  ]);
  await settled(one, 3, 2);
  await settled(two, 1, 0);
  const today = Math.floor(Date.now() / DAY) * DAY;
  range = { from: new Date(today - DAY).toISOString(), to: new Date(today + 2 * DAY).toISOString() };
}, 120_000);

afterAll(async () => {
  await gw.close();
  dir.remove();
});

interface Usage {
  bucket: string;
  group_by: string;
  from: string;
  to: string;
  series: Array<{ key: string; name: string | null; points: Array<{ at: string; charged: number; tasks: number }> }>;
  totals: Array<{ key: string; name: string | null; charged: number; tasks: number }>;
  user_id?: string | null;
}

async function usage(client: Client, path: string, query: Record<string, string>): Promise<Usage> {
  const r = await client.get(`${path}?${new URLSearchParams({ ...range, ...query }).toString()}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ success: true, message: '' });
  return r.body.data;
}

/** Non-zero points as `key @ bucket → charged/tasks`. */
const pointsOf = (u: Usage) =>
  Object.fromEntries(
    u.series.flatMap((s) => s.points.filter((p) => p.tasks > 0 || p.charged > 0).map((p) => [`${s.key} @ ${p.at}`, `${p.charged}/${p.tasks}`])),
  );

/** The same from the ledger's settlements: each at the start of its hour or day. */
function expectedPoints(rows: readonly LedgerRow[], groupBy: 'model' | 'key', bucket: 'hour' | 'day') {
  const size = bucket === 'hour' ? HOUR : DAY;
  const sums = new Map<string, { charged: number; tasks: number }>();
  for (const r of rows.filter((row) => row.type === 'QuotaSettled')) {
    const at = new Date(Math.floor(Date.parse(r.at) / size) * size).toISOString();
    const name = `${groupBy === 'model' ? r.model : r.token_id} @ ${at}`;
    const sum = sums.get(name) ?? { charged: 0, tasks: 0 };
    sums.set(name, { charged: sum.charged + r.amount, tasks: sum.tasks + 1 });
  }
  return Object.fromEntries([...sums].map(([name, s]) => [name, `${s.charged}/${s.tasks}`]));
}

describe('GET /api/usage', () => {
  it('by model and by key, per hour and per day: the exact sums, failures charging nothing', async () => {
    const rows = await ledgerOf(one.client);
    for (const bucket of ['hour', 'day'] as const) {
      const byModel = await usage(one.client, '/api/usage', { group_by: 'model', bucket });
      expect(byModel.totals).toEqual([
        { key: FULL, name: FULL, charged: 3 * PER_IMAGE, tasks: 2 },
        { key: CURATED, name: CURATED, charged: PER_IMAGE, tasks: 1 },
      ]);
      expect(pointsOf(byModel)).toEqual(expectedPoints(rows, 'model', bucket));

      const byKey = await usage(one.client, '/api/usage', { group_by: 'key', bucket });
      expect(byKey.totals).toEqual([
        { key: keyA.id, name: 'key-a', charged: 3 * PER_IMAGE, tasks: 2 },
        { key: keyB.id, name: 'key-b', charged: PER_IMAGE, tasks: 1 },
      ]);
      expect(pointsOf(byKey)).toEqual(expectedPoints(rows, 'key', bucket));

      // Every bucket of the range, oldest first; the series in the totals' order, summing to them.
      const size = bucket === 'hour' ? HOUR : DAY;
      expect(byKey).toMatchObject({ bucket, group_by: 'key', from: range.from, to: range.to });
      for (const [i, s] of byKey.series.entries()) {
        expect(s.points.map((p) => p.at)).toEqual(
          Array.from({ length: (3 * DAY) / size }, (_, j) => new Date(Date.parse(range.from) + j * size).toISOString()),
        );
        expect({ key: s.key, name: s.name, charged: s.points.reduce((a, p) => a + p.charged, 0), tasks: s.points.reduce((a, p) => a + p.tasks, 0) }).toEqual(
          byKey.totals[i],
        );
      }
    }
    // A day is the sum of its hours.
    const hours = await usage(one.client, '/api/usage', { group_by: 'model', bucket: 'hour' });
    const days = await usage(one.client, '/api/usage', { group_by: 'model', bucket: 'day' });
    for (const s of days.series) {
      for (const p of s.points) {
        const inDay = hours.series.find((h) => h.key === s.key)!.points.filter((h) => h.at.slice(0, 10) === p.at.slice(0, 10));
        expect(p.charged).toBe(inDay.reduce((a, h) => a + h.charged, 0));
      }
    }
  });

  it('defaults: by model, by the day, the 30 days to now; an empty range has no series', async () => {
    const r = await one.client.get('/api/usage');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ bucket: 'day', group_by: 'model' });
    expect(r.body.data.series[0].points).toHaveLength(31);
    expect(r.body.data.totals.map((t: { charged: number }) => t.charged)).toEqual([3 * PER_IMAGE, PER_IMAGE]);
    const before = await one.client.get('/api/usage?bucket=hour&from=2020-01-01&to=2020-01-02');
    expect(before.body.data).toEqual({
      bucket: 'hour',
      group_by: 'model',
      from: '2020-01-01T00:00:00.000Z',
      to: '2020-01-02T00:00:00.000Z',
      series: [],
      totals: [],
    });
    // A user who spent nothing sees nothing.
    const idle = await newUser(admin);
    expect((await usage(idle.client, '/api/usage', {})).totals).toEqual([]);
  });

  it('refuses a bad group_by, bucket, from or to, naming the field; needs a session', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['group_by=user', 'group_by', /^group_by: /],
      ['bucket=week', 'bucket', /^bucket: /],
      ['from=yesterday', 'from', /^from: must be a date or time/],
      ['to=2025-13-01', 'to', /^to: must be a date or time/],
      ['from=2025-02-01&to=2025-01-01', 'to', /^to: must be after from/],
      ['from=2025-01-01T10:00:00Z&to=2025-01-01T10:00:00Z', 'to', /^to: must be after from/],
      ['from=2999-01-01', 'from', /^from: must be before to/],
      ['bucket=hour&from=2025-01-01&to=2025-02-01T00:00:01Z', 'from', /^from: from and to span more than 31 days in whole hours, the most bucket=hour covers/],
      ['bucket=day&from=2024-01-01&to=2025-01-02', 'from', /^from: from and to span more than 366 days in whole days, the most bucket=day covers/],
    ];
    for (const [query, field, message] of cases) {
      const r = await one.client.get(`/api/usage?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body, query).toMatchObject({ success: false, code: 'invalid_request' });
      expect(r.body.message, query).toMatch(message);
      expect(r.body.message.startsWith(`${field}: `), query).toBe(true);
    }
    // The widest ranges pass: 31 days of hours, 366 days of days.
    expect((await one.client.get('/api/usage?bucket=hour&from=2025-01-01&to=2025-02-01')).status).toBe(200);
    expect((await one.client.get('/api/usage?bucket=day&from=2024-01-01&to=2025-01-01')).status).toBe(200);
    expect((await new Client(gw.url).get('/api/usage')).status).toBe(401);
    // An API key is not a session.
    expect((await new Client(gw.url, keyA.key).get('/api/usage')).status).toBe(401);
  });
});

describe('GET /api/admin/usage', () => {
  it("sums every account, or one user's with user_id; refuses non-administrators and unknown users", async () => {
    const everyone = await usage(admin, '/api/admin/usage', { group_by: 'model', bucket: 'day' });
    expect(everyone.user_id).toBeNull();
    expect(everyone.totals).toEqual([
      { key: FULL, name: FULL, charged: 4 * PER_IMAGE, tasks: 3 },
      { key: CURATED, name: CURATED, charged: PER_IMAGE, tasks: 1 },
    ]);
    const rows = [...(await ledgerOf(one.client)), ...(await ledgerOf(two.client))];
    expect(pointsOf(everyone)).toEqual(expectedPoints(rows, 'model', 'day'));
    const everyKey = await usage(admin, '/api/admin/usage', { group_by: 'key', bucket: 'hour' });
    // Equal charges in the order of the keys' ids (random here): compared by name.
    expect(everyKey.totals.map((t) => [t.name, t.charged, t.tasks]).sort()).toEqual([
      ['key-a', 3 * PER_IMAGE, 2],
      ['key-b', PER_IMAGE, 1],
      ['key-c', PER_IMAGE, 1],
    ]);
    expect(pointsOf(everyKey)).toEqual(expectedPoints(rows, 'key', 'hour'));

    const onlyTwo = await usage(admin, '/api/admin/usage', { group_by: 'key', bucket: 'hour', user_id: two.userId });
    expect(onlyTwo.user_id).toBe(two.userId);
    expect(onlyTwo.totals).toEqual([{ key: keyC.id, name: 'key-c', charged: PER_IMAGE, tasks: 1 }]);
    // The same as the user's own answer.
    const { user_id: _, ...sameAsOwn } = onlyTwo;
    expect(sameAsOwn).toEqual(await usage(two.client, '/api/usage', { group_by: 'key', bucket: 'hour' }));

    const refused = await one.client.get('/api/admin/usage');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, code: 'forbidden' });
    const unknown = await admin.get('/api/admin/usage?user_id=usr_nobody');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'not_found', message: 'user_id: no user usr_nobody' });
    const bad = await admin.get('/api/admin/usage?group_by=day');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^group_by: /);
  });
});

describe('GET /api/billing/ledger: keys, models and tasks; CSV', () => {
  it('every reservation, settlement and release names its task, model and key; credits none', async () => {
    const rows = await ledgerOf(one.client);
    const keyed = rows.filter((r) => r.type !== 'QuotaCredited');
    expect(keyed.map((r) => r.type).sort()).toEqual([...Array(2).fill('QuotaReleased'), ...Array(5).fill('QuotaReserved'), ...Array(3).fill('QuotaSettled')]);
    for (const r of keyed) {
      expect(r.task_id, JSON.stringify(r)).toMatch(/^task_/);
      expect([FULL, CURATED], JSON.stringify(r)).toContain(r.model);
      expect([keyA.id, keyB.id], JSON.stringify(r)).toContain(r.token_id);
      expect(r.token_name).toBe(r.token_id === keyA.id ? 'key-a' : 'key-b');
    }
    // A release names its reservation's model.
    for (const release of rows.filter((r) => r.type === 'QuotaReleased')) {
      const reserved = rows.find((r) => r.type === 'QuotaReserved' && r.reservation_id === release.reservation_id)!;
      expect(release).toMatchObject({ model: reserved.model, token_id: reserved.token_id, task_id: reserved.task_id });
    }
    expect(
      rows
        .filter((r) => r.type === 'QuotaReleased')
        .map((r) => r.model)
        .sort(),
    ).toEqual([CURATED, FULL]);
    for (const credit of rows.filter((r) => r.type === 'QuotaCredited'))
      expect(credit).toMatchObject({ task_id: null, model: null, token_id: null, token_name: null });
  });

  it('the CSV file parses back to the JSON statement, for the user and for an administrator', async () => {
    const csv = await one.client.get('/api/billing/ledger?format=csv');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${one.accountId}.csv"`);
    const json = await ledgerOf(one.client);
    expect(recordsOfCsv(csv.body as string)).toEqual(json);
    // Every page, not just the first: the JSON statement in pages of 3 is the same rows.
    const paged: LedgerRow[] = [];
    for (let p = 0; paged.length < json.length; p++) paged.push(...(await one.client.get(`/api/billing/ledger?size=3&p=${p}`)).body.data.items);
    expect(paged).toEqual(json);
    // The note with a comma, quotes and a line break came through whole.
    expect(json.some((r) => r.note === 'goodwill, "sorry"\nsecond line')).toBe(true);

    const byAdmin = await admin.get(`/api/billing/ledger?account_id=${one.accountId}&format=csv`);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${one.accountId}.csv"`);
    expect(byAdmin.body).toBe(csv.body);
    // Filters apply: one task's entries.
    const task = json.find((r) => r.type === 'QuotaReleased')!.task_id!;
    expect(recordsOfCsv((await one.client.get(`/api/billing/ledger?format=csv&task_id=${task}`)).body as string)).toEqual(
      await ledgerOf(one.client, `&task_id=${task}`),
    );
    // And a time window: the same rows as the JSON statement's window.
    const window = `&from=${encodeURIComponent(json.at(-1)!.at)}&to=${encodeURIComponent(json[0]!.at)}`;
    const windowed = recordsOfCsv((await one.client.get(`/api/billing/ledger?format=csv${window}`)).body as string);
    expect(windowed).toEqual(await ledgerOf(one.client, window));
    expect(windowed).toHaveLength(json.length);
    // Another's statement stays refused, as CSV too; an unknown format is a 400 naming it.
    expect((await two.client.get(`/api/billing/ledger?account_id=${one.accountId}&format=csv`)).status).toBe(403);
    const bad = await one.client.get('/api/billing/ledger?format=xlsx');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^format: /);
  });

  it('a deleted key keeps its id on the rows and loses its name', async () => {
    expect((await one.client.delete(`/api/token/${keyB.id}`)).status).toBe(200);
    const rows = await ledgerOf(one.client);
    const ofB = rows.filter((r) => r.token_id === keyB.id);
    expect(ofB.length).toBe(4);
    expect(ofB.every((r) => r.token_name === null)).toBe(true);
    const byKey = await usage(one.client, '/api/usage', { group_by: 'key' });
    expect(byKey.totals).toEqual([
      { key: keyA.id, name: 'key-a', charged: 3 * PER_IMAGE, tasks: 2 },
      { key: keyB.id, name: null, charged: PER_IMAGE, tasks: 1 },
    ]);
  });
});

describe('after a restart', () => {
  it('answers the same usage; and so after the usage view is rebuilt from the events', async () => {
    const answers = async () => ({
      hours: await usage(one.client, '/api/usage', { group_by: 'key', bucket: 'hour' }),
      days: await usage(one.client, '/api/usage', { group_by: 'model', bucket: 'day' }),
      everyone: await usage(admin, '/api/admin/usage', { group_by: 'model', bucket: 'hour' }),
    });
    const before = await answers();
    const restart = async () => {
      await gw.close();
      gw = await startGateway(FAST_ENGINE, { dataDir: dir.path, keepData: true });
      admin = await adminClient(gw);
      one.client = new Client(gw.url);
      await one.client.login(one.username, one.password);
      await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    };
    await restart();
    expect(await answers()).toEqual(before);

    // Without the view: the restarted runner folds every settlement again, each once.
    await gw.gateway.deps.views.reset(VIEWS.usage, 'usage');
    await restart();
    expect(await answers()).toEqual(before);
  }, 60_000);
});

/** CSV rows as the JSON statement's records: numbers as numbers, the basis as JSON, null as null. */
function recordsOfCsv(text: string): LedgerRow[] {
  const [header, ...rows] = parseCsv(text);
  const numeric = new Set(['amount', 'balance_delta', 'reserved_delta', 'delivered_units']);
  return rows.map(
    (row) =>
      Object.fromEntries(
        header!.map((column, i) => {
          const cell = row[i] ?? null;
          if (cell === null) return [column, null];
          if (column === 'basis') return [column, JSON.parse(cell)];
          return [column!, numeric.has(column!) ? Number(cell) : cell];
        }),
      ) as LedgerRow,
  );
}
