/** Simulated sync upstream additions: streaming (images and chat), picgen generations and edits, unfetchable result URLs. */
import { afterEach, describe, expect, it } from 'vitest';
import { AUTH, download, expectPng, postJson, startSim, type SimServer } from './sim-server.js';

const servers: SimServer[] = [];
async function sim(stepMs = 0): Promise<SimServer> {
  const server = await startSim({ stepMs });
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function stream(url: string, body: unknown) {
  const res = await fetch(url, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const frames = text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((b) => ({
      event: /^event: (.*)$/m.exec(b)?.[1],
      data: b
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join(''),
    }));
  return { status: res.status, type: res.headers.get('content-type'), frames };
}

describe('streaming images', () => {
  it('per image a partial_image preview, then completed events whose usages add up', async () => {
    const server = await sim(10);
    const r = await stream(`${server.base}/v1/images/generations`, {
      model: 'pro-image',
      prompt: 'a fox',
      n: 2,
      size: '256x128',
      stream: true,
      images: ['https://x/1.png'],
    });
    expect(r.type).toMatch(/^text\/event-stream/);
    expect(r.frames.map((f) => f.event)).toEqual([
      'image_generation.partial_image',
      'image_generation.partial_image',
      'image_generation.completed',
      'image_generation.completed',
    ]);
    const events = r.frames.map((f) => JSON.parse(f.data));
    expect(expectPng(Buffer.from(events[0].b64_json, 'base64'))).toEqual({ width: 32, height: 16 });
    expect(expectPng(Buffer.from(events[2].b64_json, 'base64'))).toEqual({ width: 256, height: 128 });
    expect(events[2]).toMatchObject({ type: 'image_generation.completed', size: '256x128', quality: 'auto', background: 'auto', output_format: 'png' });
    expect(events[2].usage.input_tokens_details).toEqual({ text_tokens: 2, image_tokens: 256 });
    expect(events[3].usage.input_tokens).toBe(0);
  });

  it('[sim:reject] is refused before the stream; [sim:fail] sends an error frame after the previews', async () => {
    const server = await sim();
    expect((await postJson(`${server.base}/v1/images/generations`, { model: 'std-image', prompt: 'x [sim:reject]', stream: true })).status).toBe(400);
    const r = await stream(`${server.base}/v1/images/generations`, { model: 'std-image', prompt: 'x [sim:fail]', stream: true });
    expect(r.frames.map((f) => f.event)).toEqual(['image_generation.partial_image', 'error']);
    expect(JSON.parse(r.frames[1]!.data).error.code).toBe('upstream_failed');
  });
});

describe('streaming chat', () => {
  it('role, content with Markdown links, finish with usage, [DONE]', async () => {
    const server = await sim();
    const r = await stream(`${server.base}/v1/chat/completions`, { model: 'std-image', stream: true, messages: [{ role: 'user', content: 'a cat' }] });
    expect(r.frames.at(-1)!.data).toBe('[DONE]');
    const chunks = r.frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks.map((c) => c.object)).toEqual(['chat.completion.chunk', 'chat.completion.chunk', 'chat.completion.chunk']);
    const link = /\((\S+)\)/.exec(chunks[1].choices[0].delta.content)![1]!;
    expect((await download(link)).status).toBe(200);
    expect(chunks[2]).toMatchObject({ choices: [{ finish_reason: 'stop' }], usage: { total_tokens: expect.any(Number) } });
  });
});

describe('picgen', () => {
  it('generations: one URL image of the preset size, usage with generated_images', async () => {
    const server = await sim();
    const { status, json } = await postJson(`${server.base}/v1/images/generations`, { model: 'vendor-picgen-4-0-250828', prompt: 'a hill', size: '1K' });
    expect(status).toBe(200);
    const data = json.data as Array<{ url: string }>;
    expect(data).toHaveLength(1);
    expect(expectPng((await download(data[0]!.url)).bytes)).toEqual({ width: 1024, height: 1024 });
    expect(json.usage).toMatchObject({ generated_images: 1 });
  });

  it('sequential auto returns max_images (capped by 15 minus references); layers return three; b64_json on request', async () => {
    const server = await sim();
    const seq = await postJson(`${server.base}/v1/images/edits`, {
      model: 'vendor-picgen-5-0-260128',
      prompt: 'p',
      image: Array.from({ length: 13 }, (_, i) => `https://x/${i}.png`),
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 5 },
    });
    expect((seq.json.data as unknown[]).length).toBe(2);
    const layers = await postJson(`${server.base}/v1/images/edits`, {
      model: 'vendor-picgen-5-0-pro-260628',
      image: 'https://x/1.png',
      layer_decomposition: true,
      response_format: 'b64_json',
      size: 'auto',
    });
    const items = layers.json.data as Array<{ b64_json: string }>;
    expect(items).toHaveLength(3);
    expectPng(Buffer.from(items[0]!.b64_json, 'base64'));
  });

  it('edits need an image; generations need a prompt', async () => {
    const server = await sim();
    expect((await postJson(`${server.base}/v1/images/edits`, { model: 'vendor-picgen-4-0-250828', prompt: 'p' })).status).toBe(400);
    expect((await postJson(`${server.base}/v1/images/generations`, { model: 'vendor-picgen-4-0-250828', prompt: ' ' })).status).toBe(400);
    expect((await postJson(`${server.base}/v1/images/edits`, { model: 'vendor-picgen-4-0-250828', prompt: 'p', image: 'https://x/1.png' }, {})).status).toBe(
      401,
    );
  });

  it('[sim:private-url] answers a URL that redirects to the metadata address; [sim:broken-url] one that is 404', async () => {
    const server = await sim();
    const priv = await postJson(`${server.base}/v1/images/generations`, { model: 'vendor-picgen-4-0-250828', prompt: 'p [sim:private-url]' });
    const url = (priv.json.data as Array<{ url: string }>)[0]!.url;
    expect(url).toBe(`${server.base}/redirect/metadata`);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://169.254.169.254/latest/meta-data/');
    const broken = await postJson(`${server.base}/v1/images/generations`, { model: 'std-image', prompt: 'p [sim:broken-url]' });
    expect((await download((broken.json.data as Array<{ url: string }>)[0]!.url)).status).toBe(404);
  });
});
