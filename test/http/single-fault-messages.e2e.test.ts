/**
 * The single-fault message comparison: every refusal's status and words, pinned.
 *
 * Each family checks a body twice today (the zod schema on the route, then the hand-written
 * readers of request.ts); this test pins what a client sees so that one of the two can go
 * without a word changing. On the assembled gateway (simulator on, the fuzz world of
 * test/support/fuzz/fixtures.ts; requests go through fastify's `inject`: the whole request
 * life cycle, without sockets), every operation with a body the world knows to be valid gets
 * that body with exactly one change (test/support/fuzz/single-fault.ts): each field of the body
 * and of the route's declared body schema (`/openapi.json`, so optional fields the template
 * leaves out count too, and objects such as `metadata` are entered) removed, null, of each wrong
 * type, empty, blank, out of range, too long, off its enum, an unsafe or too long URL, an array
 * empty, too long or with an item of the wrong type; and the body as a whole not an object or
 * with an unknown field. The two multipart operations (`POST /v1/images/edits`,
 * `POST /v1/videos`) get the same faults as form fields (but null, which a form cannot carry),
 * plus faults of files and of the form itself; the list operations with validated query
 * parameters (users, tokens, ledger, tasks, usage) get one bad parameter at a time
 * (`GET /v1/videos/{task_id}/content?variant` is left out: it needs a finished video's id).
 *
 * Each case's answer is recorded as its status and, for a refusal, the parts of the error body
 * that carry the message, the code and the field (no ids, no times), and compared with
 * single-fault-messages.golden.jsonl beside this file (one case per line, sorted by operation
 * and case). After an intended change of wording, regenerate the golden file and review its diff:
 *
 *     UPDATE_GOLDEN=1 npx vitest run test/http/single-fault-messages.e2e.test.ts
 *
 * About 3,800 cases; 40 to 60 s on two cores (accepted submits are most of it). It lives in
 * test/http (gateway behaviour over HTTP) rather than test/contract (the store adapters'
 * contract suites, which `npm run test:integration` runs).
 *
 * Determinism: no per-key rate limit or tasks-in-flight limit is set (defaults: none), login
 * limits are off for this gateway, the funded account gets enough credit that no accepted case
 * can run it dry, the art `change` parent has finished before anything is sent, and the admin,
 * token and login operations (which change state other cases could read) go one at a time, after
 * the family operations.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/gateway.js';
import { FORM_ROUTES, startFuzzWorld, type FuzzWorld } from '../support/fuzz/fixtures.js';
import type { Json } from '../support/fuzz/json.js';
import { TINY_PNG } from '../support/fuzz/multipart.js';
import { encodeForm, formFieldsOf, queryFaults, resolve, singleFaults, type FormPart, type OpenApiDoc, type Schema } from '../support/fuzz/single-fault.js';

const GOLDEN = new URL('./single-fault-messages.golden.jsonl', import.meta.url);
const UPDATE = process.env.UPDATE_GOLDEN === '1';
/** Cases in flight at once for the family operations (the others go one at a time). */
const CONCURRENCY = 16;

/** Operations with validated query parameters, and who may call them. */
const QUERY_OPERATIONS: Record<string, As> = {
  'GET /api/user/': 'admin',
  'GET /api/token/': 'session',
  'GET /api/billing/ledger': 'session',
  'GET /api/tasks': 'session',
  'GET /api/usage': 'session',
  'GET /api/admin/usage': 'admin',
};

type As = 'rich' | 'admin' | 'session' | 'none';

interface Case {
  op: string;
  name: string;
  as: As;
  method: string;
  url: string;
  contentType?: string;
  payload?: string | Buffer;
}

interface Recorded {
  op: string;
  case: string;
  status: number;
  error?: Record<string, unknown>;
}

let world: FuzzWorld;
let doc: OpenApiDoc;
let cases: Case[] = [];
let recorded: Recorded[] = [];
let seconds = 0;

/** Who sends a route's template (as in fixtures.ts). */
function callerOf(route: string): As {
  if (route === 'POST /api/user/login') return 'none';
  if (route.includes(' /api/token/')) return 'session';
  if (route.includes(' /api/')) return 'admin';
  return 'rich';
}

/** The family a path belongs to: enum values of its other fields are faults of each field. */
function familyOf(path: string): string {
  const prefixes: Array<[RegExp, string]> = [
    [/^\/api\//, 'api'],
    [/^\/art\//, 'art'],
    [/^\/tune\//, 'tune'],
    [/^\/clip\//, 'clip'],
    [/^\/vendor\//, 'motion'],
    [/^\/v1\/videos/, 'vid-h3'],
    [/^\/v1\/video\//, 'vidgen'],
    [/^\/v1\/images\/async\//, 'images'],
  ];
  return prefixes.find(([re]) => re.test(path))?.[1] ?? 'sync-images';
}

/**
 * Fields the family's readers check that its schema leaves free (an object forwarded as the base
 * of the upstream request), with what they take.
 */
const MOTION_BASE: Array<{ path: string[]; schema: Schema }> = [
  { path: ['metadata', 'input', 'prompt'], schema: { type: 'string' } },
  { path: ['metadata', 'input', 'img_url'], schema: { type: 'string', format: 'uri' } },
  { path: ['metadata', 'parameters', 'size'], schema: { type: 'string' } },
  { path: ['metadata', 'parameters', 'resolution'], schema: { type: 'string' } },
  { path: ['metadata', 'parameters', 'duration'], schema: { type: 'integer', minimum: 1, maximum: 3600 } },
];
const EXTRA_FIELDS: Record<string, Array<{ path: string[]; schema: Schema }>> = {
  'POST /vendor/api/v1/services/aigc/video-generation/video-synthesis': MOTION_BASE,
  'POST /vendor/api/v1/services/aigc/image2video/video-synthesis': MOTION_BASE,
};

function bodySchemaOf(route: string, contentType: string): Schema | undefined {
  const [method, path] = route.split(' ') as [string, string];
  return resolve(doc, doc.paths[path]?.[method.toLowerCase()]?.requestBody?.content[contentType]?.schema);
}

function jsonCases(): Case[] {
  const out: Case[] = [];
  const routes = Object.keys(world.templates).sort();
  for (const route of routes) {
    const [method, path] = route.split(' ') as [string, string];
    const family = routes.filter((r) => familyOf(r.split(' ')[1]!) === familyOf(path)).map((r) => bodySchemaOf(r, 'application/json'));
    const faults = singleFaults(
      doc,
      world.templates[route]!,
      bodySchemaOf(route, 'application/json'),
      family.filter((s): s is Schema => !!s),
      { extra: EXTRA_FIELDS[route] ?? [] },
    );
    for (const f of faults) {
      out.push({ op: route, name: f.name, as: callerOf(route), method, url: path, contentType: 'application/json', payload: JSON.stringify(f.body) });
    }
  }
  return out;
}

const PNG_URI = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
const png = (name: string): FormPart => ({ name, value: TINY_PNG, file: { filename: 'f.png', contentType: 'image/png' } });

/**
 * The multipart operations: the JSON template as form fields (its data URI image as a file), each
 * JSON fault that a form can carry (a form has no null), and faults of the form's own: files.
 */
function formCases(): Case[] {
  const out: Case[] = [];
  for (const [route, fileField] of Object.entries(FORM_ROUTES).sort()) {
    const [method, path] = route.split(' ') as [string, string];
    const template = world.templates[route] as { [key: string]: Json };
    // The JSON body's faults: the form's own schema states how a part carries a field, narrower
    // than what the readers take (the bracketed objects the openai client sends, `input_reference[image_url]`).
    const schema = bodySchemaOf(route, 'application/json');
    const op = `${route} (multipart)`;
    const add = (name: string, parts: FormPart[]) => {
      const { contentType, payload } = encodeForm(parts);
      out.push({ op, name, as: 'rich', method, url: path, contentType, payload });
    };
    /** Form parts of a body: a value equal to the template's data URI goes as a file. */
    const partsOf = (body: { [key: string]: Json }): FormPart[] => {
      const files = Object.entries(body).filter(([, v]) => v === PNG_URI);
      const rest = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== PNG_URI));
      return [...formFieldsOf(rest), ...files.map(([k]) => png(k))];
    };
    for (const f of singleFaults(doc, template, schema, schema ? [schema] : [], { depth: 2 })) {
      if (/: (null|type boolean)$/.test(f.name) || f.body === null || typeof f.body !== 'object' || Array.isArray(f.body)) continue;
      add(f.name, partsOf(f.body));
    }
    const fields = formFieldsOf(Object.fromEntries(Object.entries(template).filter(([, v]) => v !== PNG_URI)));
    const hasFile = Object.values(template).includes(PNG_URI);
    const file = hasFile ? [png(fileField)] : [];
    add('form: a field repeated', [...fields, ...fields.slice(0, 1), ...file]);
    add('form: only the file', file);
    add('form: no parts', []);
    add(`${fileField}: an uploaded file`, [...fields, png(fileField)]);
    add(`${fileField}: two uploaded files`, [...fields, png(fileField), png(fileField)]);
    add(`${fileField}: a file of bytes that are no image`, [
      ...fields,
      { name: fileField, value: Buffer.from('not an image'), file: { filename: 'f.bin', contentType: 'application/octet-stream' } },
    ]);
    add(`${fileField}: an empty file`, [...fields, { name: fileField, value: Buffer.alloc(0), file: { filename: 'f.png', contentType: 'image/png' } }]);
    add('mask: an uploaded file', [...fields, ...file, png('mask')]);
    add('file: under an unknown field name', [...fields, png('unknown_file')]);
    for (const [key, value] of Object.entries(template)) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const rest = Object.fromEntries(Object.entries(template).filter(([k, v]) => k !== key && v !== PNG_URI));
        add(`${key}: as JSON text`, [...formFieldsOf(rest), { name: key, value: JSON.stringify(value) }, ...file]);
        add(`${key}: as invalid JSON text`, [...formFieldsOf(rest), { name: key, value: '{"a":' }, ...file]);
      }
    }
  }
  return out;
}

function queryCases(): Case[] {
  const out: Case[] = [];
  for (const [op, as] of Object.entries(QUERY_OPERATIONS)) {
    const [method, path] = op.split(' ') as [string, string];
    for (const q of queryFaults(doc.paths[path]?.[method.toLowerCase()]?.parameters ?? [], doc)) {
      out.push({ op, name: q.name, as, method, url: path + q.query });
    }
  }
  return out;
}

/** Values of this world that differ from run to run (ids, generated user names), longest first. */
function volatileValues(): string[] {
  const login = world.templates['POST /api/user/login'] as { username?: string };
  const credit = world.templates['POST /api/admin/credits'] as { user_id?: string };
  const values = [...(world.pools.id ?? []), ...(world.pools.task_id ?? []), login.username ?? '', credit.user_id ?? ''];
  return [...new Set(values)].filter((v) => v.length >= 6 && v !== 'task_does_not_exist').sort((a, b) => b.length - a.length);
}

/** The parts of an error body that carry the message, the code and the field at fault. */
function errorOf(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { body: String(body) };
  const b = body as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ['code', 'reason', 'message', 'description']) if (key in b) out[key] = b[key];
  const e = b.error;
  if (e && typeof e === 'object') {
    const inner = e as Record<string, unknown>;
    // The openai object: its fields as they are when alone, else only where they differ.
    for (const key of ['message', 'type', 'param', 'code']) {
      if (!(key in inner)) continue;
      if (!(key in out) || key === 'type' || key === 'param') out[key] = inner[key];
      else if (inner[key] !== out[key]) out[`error.${key}`] = inner[key];
    }
  }
  return out;
}

async function send(c: Case, scrub: (text: string) => string): Promise<Recorded> {
  const headers: Record<string, string> = {};
  if (c.contentType) headers['content-type'] = c.contentType;
  if (c.as === 'rich') headers.authorization = `Bearer ${world.creds.richKey}`;
  if (c.as === 'session') headers.cookie = world.creds.brokeCookie;
  if (c.as === 'admin') headers.cookie = world.creds.adminCookie;
  const res = await world.gw.gateway.app.inject({ method: c.method as 'GET', url: c.url, headers, ...(c.payload !== undefined ? { payload: c.payload } : {}) });
  if (res.statusCode < 400) return { op: c.op, case: c.name, status: res.statusCode };
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    /* recorded as text */
  }
  const error = JSON.parse(scrub(JSON.stringify(errorOf(body)))) as Record<string, unknown>;
  return { op: c.op, case: c.name, status: res.statusCode, error };
}

async function sendAll(batch: readonly Case[], concurrency: number, scrub: (text: string) => string): Promise<Recorded[]> {
  const out: Recorded[] = new Array(batch.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < batch.length; i = next++) out[i] = await send(batch[i]!, scrub);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

const keyOf = (r: Pick<Recorded, 'op' | 'case'>) => `${r.op} | ${r.case}`;
const lineOf = (r: Recorded) => JSON.stringify(r);

beforeAll(async () => {
  world = await startFuzzWorld({ LOGIN_RATE_LIMIT: '0', LOGIN_RATE_LIMIT_PER_USER: '0' });
  doc = (await (await fetch(`${world.gw.url}/openapi.json`)).json()) as OpenApiDoc;
  const app = world.gw.gateway.app;
  const admin = { cookie: world.creds.adminCookie };
  // Enough credit that no accepted case (n = 128, an hour of video) can be refused for want of it.
  const credit = world.templates['POST /api/admin/credits'] as { user_id: string };
  const topUp = await app.inject({
    method: 'POST',
    url: '/api/admin/credits',
    headers: admin,
    payload: { user_id: credit.user_id, amount: 10 ** 15, note: 'top up' },
  });
  if (topUp.statusCode !== 200) throw new Error(`top-up: ${topUp.statusCode} ${topUp.body}`);
  // `change` takes a finished parent only.
  const { taskId } = world.templates['POST /art/submit/change'] as { taskId: string };
  await eventually(async () => {
    const r = await app.inject({ method: 'GET', url: `/art/task/${taskId}/fetch`, headers: { authorization: `Bearer ${world.creds.richKey}` } });
    return (JSON.parse(r.body) as { status?: string }).status === 'SUCCESS' ? true : undefined;
  }, 20_000);
  cases = [...jsonCases(), ...formCases(), ...queryCases()];
}, 120_000);

afterAll(async () => {
  await world?.gw.close();
});

describe('single-fault messages', () => {
  it('the world is as the cases assume', () => {
    expect(world.staleTemplates).toEqual([]);
    expect(new Set(cases.map((c) => `${c.op} | ${c.name}`)).size, 'case names are unique per operation').toBe(cases.length);
  });

  it('every single-fault answer is word for word the golden one', async () => {
    const volatile = volatileValues();
    // Ids become `<id>`; a run of one character (a message quoting a 70,000-character value) `<a×70000>`.
    const scrub = (text: string) =>
      volatile.reduce((t, v) => t.split(v).join('<id>'), text).replace(/(.)\1{63,}/g, (run: string, c: string) => `<${c}×${run.length}>`);
    const started = Date.now();
    // Family operations first, a few at a time; then the ones that change shared state, in order.
    const isShared = (c: Case) => c.url.startsWith('/api/');
    const isLogin = (c: Case) => c.op === 'POST /api/user/login';
    const phases: Array<[string, Case[], number]> = [
      ['family', cases.filter((c) => !isShared(c)), CONCURRENCY],
      ['shared', cases.filter((c) => isShared(c) && !isLogin(c)), 1],
      ['login', cases.filter(isLogin), 1],
    ];
    const timings: string[] = [];
    recorded = [];
    for (const [name, batch, concurrency] of phases) {
      const t0 = Date.now();
      recorded.push(...(await sendAll(batch, concurrency, scrub)));
      timings.push(`${name} ${batch.length} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    seconds = (Date.now() - started) / 1000;
    recorded.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    const perOp: Record<string, number> = {};
    for (const r of recorded) perOp[r.op] = (perOp[r.op] ?? 0) + 1;
    console.log(`[single-fault] ${recorded.length} cases in ${seconds.toFixed(1)} s (${timings.join(', ')}): ${JSON.stringify(perOp)}`);

    const text = recorded.map(lineOf).join('\n') + '\n';
    if (UPDATE) {
      writeFileSync(GOLDEN, text);
      return;
    }
    if (!existsSync(GOLDEN)) throw new Error(`no ${GOLDEN.pathname}: make it with UPDATE_GOLDEN=1`);
    const golden = new Map<string, string>();
    for (const line of readFileSync(GOLDEN, 'utf8').split('\n').filter(Boolean)) golden.set(keyOf(JSON.parse(line) as Recorded), line);
    const now = new Map(recorded.map((r) => [keyOf(r), lineOf(r)]));
    const changed: string[] = [];
    const added: string[] = [];
    const gone: string[] = [];
    for (const [key, line] of now) {
      const was = golden.get(key);
      if (was === undefined) added.push(`+ ${line}`);
      else if (was !== line) changed.push(`- ${was}\n+ ${line}`);
    }
    for (const [key, line] of golden) if (!now.has(key)) gone.push(`- ${line}`);
    const report = [
      `${changed.length} cases answer differently, ${added.length} are not in the golden file, ${gone.length} of the golden file were not run`,
      `(an intended change: UPDATE_GOLDEN=1 npx vitest run test/http/single-fault-messages.e2e.test.ts, then review the diff)`,
      ...[...changed, ...added, ...gone].slice(0, 50),
    ].join('\n');
    expect(changed.length + added.length + gone.length, report).toBe(0);
  }, 180_000);
});
