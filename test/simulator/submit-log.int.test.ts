/**
 * The simulator's submit log (`GET /_sim/_submits`): every submit it received, with the
 * gateway's `Idempotency-Key`, the prompt's hash and head, the ids it minted and its answer's
 * status; and lookups of ids this process never minted. Its answers stay stateless.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SubmitLogSnapshot } from '../../src/simulator/submit-log.js';
import { AUTH, getJson, postJson, startSim, type SimServer } from './sim-server.js';

const servers: SimServer[] = [];
async function sim(): Promise<SimServer> {
  const server = await startSim({ stepMs: 0 });
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const log = async (server: SimServer) => (await getJson(`${server.base}/_submits`)).json as unknown as SubmitLogSnapshot;
const IMAGES = '/v1/images/async/generations';

describe('the simulator logs what it was asked', () => {
  it('records each submit with its idempotency key, prompt, minted task id and status, refusals included', async () => {
    const server = await sim();
    const accepted = await postJson(
      `${server.base}${IMAGES}`,
      { model: 'anime-diffusion-4-5-full', prompt: 'a heron at dawn' },
      { ...AUTH, 'idempotency-key': 'task_one' },
    );
    expect(accepted.status).toBe(200);
    const refused = await postJson(`${server.base}${IMAGES}`, { model: 'anime-diffusion-4-5-full', prompt: 'no [sim:reject]' });
    expect(refused.status).toBe(400);
    await postJson(`${server.base}/tune/submit/LYRICS`, { prompt: 'a song about rain' });

    const { submits, dropped } = await log(server);
    expect(dropped).toBe(0);
    expect(submits).toHaveLength(3);
    expect(submits[0]).toMatchObject({
      seq: 1,
      family: 'images-async',
      path: IMAGES,
      idempotencyKey: 'task_one',
      promptHead: 'a heron at dawn',
      ids: [accepted.json.id],
      status: 200,
    });
    expect(submits[0]!.promptHash).toMatch(/^[0-9a-f]{16}$/);
    expect(submits[1]).toMatchObject({ family: 'images-async', promptHead: 'no [sim:reject]', ids: [], status: 400 });
    expect(submits[1]).not.toHaveProperty('idempotencyKey');
    expect(submits[2]).toMatchObject({ family: 'tune', path: '/tune/submit/LYRICS', promptHead: 'a song about rain', status: 200 });
    expect(submits[2]!.ids).toHaveLength(1);
    // Polls are not submits.
    expect((await getJson(`${server.base}${IMAGES}/${String(accepted.json.id)}`)).status).toBe(200);
    expect((await log(server)).submits).toHaveLength(3);
    // What is new since a given one.
    const newer = (await getJson(`${server.base}/_submits?after=1`)).json as unknown as SubmitLogSnapshot;
    expect(newer.submits.map((s) => s.seq)).toEqual([2, 3]);
  });

  it('records a streamed synchronous call once its stream has ended', async () => {
    const server = await sim();
    const res = await fetch(`${server.base}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...AUTH },
      body: JSON.stringify({ model: 'gpt-image-1', prompt: 'streamed fox', stream: true }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const [record] = (await log(server)).submits;
    expect(record).toMatchObject({ family: 'images-sync', promptHead: 'streamed fox', status: 200 });
  });

  it('counts lookups of ids another process minted: a job this upstream never accepted', async () => {
    const first = await sim();
    const second = await sim(); // same secret: it answers the first one's ids, as a restarted process would
    const { json } = await postJson(`${first.base}${IMAGES}`, { model: 'anime-diffusion-4-5-full', prompt: 'a lost otter' });
    expect((await getJson(`${first.base}${IMAGES}/${String(json.id)}`)).status).toBe(200);
    expect((await log(first)).foreignLookups).toBe(0);
    expect((await getJson(`${second.base}${IMAGES}/${String(json.id)}`)).status).toBe(200);
    expect(await log(second)).toMatchObject({ submits: [], foreignLookups: 1 });
  });
});
