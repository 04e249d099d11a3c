/**
 * Multipart edits up to the spec's limit work end to end on the embedded default (the
 * built-in simulator, which receives the references as data URIs in a JSON body): one file of
 * exactly 30 MiB, and several large files in one request. The recorded TaskSubmitted stays far
 * below the event store's append limit (issue 14, item 3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendSize, MAX_APPEND_BYTES } from '../../../src/ports/event-store.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { syncUser, TINY_PNG } from '../../support/sync-images.js';

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '0' });
  ({ key } = await syncUser(gw, 500_000_000));
});
afterAll(() => gw.close());

/** A PNG signature followed by filler: the gateway sniffs the type, the simulator counts it. */
function imageOf(bytes: number): Buffer {
  const b = Buffer.alloc(bytes, 7);
  TINY_PNG.copy(b);
  return b;
}

async function postFiles(files: Buffer[]) {
  const form = new FormData();
  form.append('model', 'vendor-picgen-4-0-250828');
  form.append('prompt', 'large references');
  for (const f of files) form.append('image[]', new Blob([f], { type: 'image/png' }), 'ref.png');
  const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, taskId: res.headers.get('x-task-id') };
}

describe('picgen edits with files up to 30 MiB each', () => {
  it('a 10 MiB file: the recorded TaskSubmitted stays small', async () => {
    const r = await postFiles([imageOf(10 * 1024 * 1024)]);
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.taskId).toMatch(/^task_/);
    const [submitted] = await gw.gateway.deps.events.readStream(`task-${r.taskId}`, { maxCount: 1 });
    expect(submitted?.type).toBe('TaskSubmitted');
    const size = appendSize([submitted!]);
    expect(size).toBeLessThan(MAX_APPEND_BYTES);
    expect(size).toBeLessThan(8 * 1024);
  }, 30_000);

  it('one file of exactly 30 MiB', async () => {
    const r = await postFiles([imageOf(30 * 1024 * 1024)]);
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.data).toHaveLength(1);
  }, 60_000);

  it('two files of 15 MiB, and three of 20 MiB (more than the 40 MiB JSON body limit together)', async () => {
    const two = await postFiles([imageOf(15 * 1024 * 1024), imageOf(15 * 1024 * 1024)]);
    expect(two.status, JSON.stringify(two.body).slice(0, 300)).toBe(200);
    const three = await postFiles([imageOf(20 * 1024 * 1024), imageOf(20 * 1024 * 1024), imageOf(20 * 1024 * 1024)]);
    expect(three.status, JSON.stringify(three.body).slice(0, 300)).toBe(200);
  }, 120_000);
});
