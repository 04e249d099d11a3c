/**
 * The declared HTTP contract as a client's tools see it: `/openapi.json` of a started gateway
 * linted by Redocly's recommended rules, and TypeScript types generated from it by
 * openapi-typescript, against which a call of every family must type-check.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let dir: string;
let doc: {
  paths: Record<string, Record<string, { operationId?: string; summary?: string; security?: unknown[]; responses?: Record<string, unknown> }>>;
  servers?: unknown[];
};
const bin = (name: string) => resolve('node_modules/.bin', name);

beforeAll(async () => {
  gw = await startGateway();
  dir = mkdtempSync(join(tmpdir(), 'openapi-'));
  doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as typeof doc;
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
});
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Paths the spec itself gives a trailing slash (`/api/token/`), and the two admin collections
 * that follow its convention; the lint's no-path-trailing-slash is accepted for these only.
 */
const TRAILING_SLASH_EXCEPTIONS = ['/api/token/', '/api/user/', '/api/channel/'];

describe('the OpenAPI document', () => {
  it('every operation has an operationId (unique), a summary, security and error responses', () => {
    const ids = new Set<string>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
        expect(ids.has(op.operationId!), `${where} repeats ${op.operationId}`).toBe(false);
        ids.add(op.operationId!);
        expect(op.summary, where).toBeTruthy();
        expect(Array.isArray(op.security), where).toBe(true);
        expect(Object.keys(op.responses ?? {}), where).toEqual(expect.arrayContaining(['400', '500']));
      }
    }
    expect(doc.servers?.length).toBeGreaterThan(0);
    // The generation routes need an API key; signing in needs nothing.
    expect(doc.paths['/v1/images/async/generations']!.post!.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/api/user/login']!.post!.security).toEqual([]);
    // The user's price list takes a session only (its key-side twin is GET /v1/pricing).
    expect(doc.paths['/api/user/pricing']!.get!.security).toEqual([{ session: [] }]);
  });

  it('a nullable enum lists null; a form field never takes null; an event stream describes one event', () => {
    const body = (path: string, type = 'application/json') => (doc.paths[path]!.post as any).requestBody.content[type].schema;
    expect(body('/art/submit/blend').properties.dimensions.enum).toEqual(['PORTRAIT', 'SQUARE', 'LANDSCAPE', null]);
    // A part is text or absent; a JSON part (metadata) may hold null inside.
    const takesNull = (field: any): boolean =>
      field.nullable === true || (field.enum ?? []).includes(null) || [...(field.anyOf ?? []), ...(field.oneOf ?? [])].some(takesNull);
    const fields = (schema: any) => Object.entries<any>(schema.properties);
    expect(fields(body('/v1/videos')).filter(([, f]) => takesNull(f)).length).toBeGreaterThan(5);
    expect(fields(body('/v1/videos', 'multipart/form-data')).filter(([, f]) => takesNull(f))).toEqual([]);
    const stream = (doc.paths['/api/events/stream'] as any).get.responses['200'].content['text/event-stream'].schema;
    expect(stream).toMatchObject({ type: 'object', required: ['data', 'event'] });
  });

  it('the statement answers JSON or CSV; the usage routes declare their query and answer', () => {
    const ledger = (doc.paths['/api/billing/ledger'] as any).get;
    expect(Object.keys(ledger.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    const item = ledger.responses['200'].content['application/json'].schema.properties.data.properties.items.items;
    expect(item.properties).toHaveProperty('token_id');
    expect(item.properties).toHaveProperty('token_name');
    expect(ledger.parameters.find((p: { name: string }) => p.name === 'format').schema.enum).toEqual(['json', 'csv']);
    for (const path of ['/api/usage', '/api/admin/usage']) {
      const op = (doc.paths[path] as any).get;
      expect(op.security, path).toEqual([{ session: [] }]);
      const names = op.parameters.map((p: { name: string }) => p.name);
      expect(names, path).toEqual(expect.arrayContaining(['group_by', 'bucket', 'from', 'to']));
      expect(op.parameters.find((p: { name: string }) => p.name === 'group_by').schema.enum, path).toEqual(['model', 'key']);
      const data = op.responses['200'].content['application/json'].schema.properties.data;
      expect(Object.keys(data.properties), path).toEqual(expect.arrayContaining(['bucket', 'group_by', 'from', 'to', 'series', 'totals']));
    }
    expect((doc.paths['/api/admin/usage'] as any).get.parameters.map((p: { name: string }) => p.name)).toContain('user_id');
    expect(Object.keys((doc.paths['/api/admin/usage'] as any).get.responses)).toEqual(expect.arrayContaining(['403', '404']));
  });

  it('Redocly lint (recommended rules) finds no error but the trailing slashes the spec asks for', () => {
    const run = spawnSync(bin('redocly'), ['lint', '--extends=recommended', '--format=json', join(dir, 'openapi.json')], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
      problems: { ruleId: string; severity: string; location: { pointer: string }[]; message: string }[];
    };
    const errors = report.problems.filter((p) => p.severity === 'error');
    const unexpected = errors.filter(
      (p) =>
        !(p.ruleId === 'no-path-trailing-slash' && TRAILING_SLASH_EXCEPTIONS.some((path) => p.location[0]?.pointer === `#/paths/${path.replace(/\//g, '~1')}`)),
    );
    expect(unexpected.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
  }, 60_000);

  it('types generated by openapi-typescript type-check an operation of every family', () => {
    execFileSync(bin('openapi-typescript'), [join(dir, 'openapi.json'), '-o', join(dir, 'openapi.d.ts')], { stdio: 'pipe' });
    const families: Array<[string, 'get' | 'post']> = [
      ['/v1/images/async/generations', 'post'],
      ['/v1/images/async/generations/{task_id}', 'get'],
      ['/v1/video/generations', 'post'],
      ['/v1/videos', 'post'],
      ['/v1/videos/{task_id}', 'get'],
      ['/tune/submit/MUSIC', 'post'],
      ['/tune/fetch/{task_id}', 'get'],
      ['/art/submit/imagine', 'post'],
      ['/art/task/{id}/fetch', 'get'],
      ['/v1/chat/completions', 'post'],
      ['/v1/images/generations', 'post'],
      ['/v1/images/edits', 'post'],
      ['/clip/v1/videos/text2video', 'post'],
      ['/vendor/api/v1/services/aigc/video-generation/video-synthesis', 'post'],
      ['/vendor/api/v1/tasks/{task_id}', 'get'],
    ];
    const calls = families
      .map(([path, method], i) => `const op${i}: paths[${JSON.stringify(path)}][${JSON.stringify(method)}] = {} as never;\nvoid op${i}.responses;`)
      .join('\n');
    writeFileSync(join(dir, 'calls.ts'), `import type { paths } from './openapi.js';\n${calls}\n`);
    const tsc = spawnSync(
      bin('tsc'),
      ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', join(dir, 'calls.ts')],
      { encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    // And it would fail: a path the document lacks does not type-check.
    writeFileSync(
      join(dir, 'missing.ts'),
      `import type { paths } from './openapi.js';\nconst op: paths['/v1/no-such-family']['post'] = {} as never;\nvoid op;\n`,
    );
    const missing = spawnSync(
      bin('tsc'),
      ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', join(dir, 'missing.ts')],
      { encoding: 'utf8' },
    );
    expect(missing.stdout).toMatch(/no-such-family/);
  }, 120_000);
});
