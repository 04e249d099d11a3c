import { afterEach, describe, expect, it } from 'vitest';
import { download, expectPng, postJson, startSim, type SimServer } from './sim-server.js';

const IMAGES = '/v1/images/generations';
const CHAT = '/v1/chat/completions';

const servers: SimServer[] = [];
async function sim(stepMs = 0): Promise<SimServer> {
  const server = await startSim({ stepMs });
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Item = { url?: string; b64_json?: string; revised_prompt?: string };

describe('sync images upstream: POST /v1/images/generations', () => {
  it('answers {created, data, usage} with b64_json PNGs and revised_prompt for pro-image', async () => {
    const server = await sim();
    const { status, json } = await postJson(`${server.base}${IMAGES}`, { model: 'pro-image', prompt: 'a blue whale', size: '1024x1536' });
    expect(status).toBe(200);
    expect(json.created).toEqual(expect.any(Number));
    const items = json.data as Item[];
    expect(items).toHaveLength(1);
    expect(items[0]!.revised_prompt).toBe('a blue whale');
    expect(expectPng(Buffer.from(items[0]!.b64_json!, 'base64'))).toEqual({ width: 1024, height: 1536 });
    const usage = json.usage as {
      total_tokens: number;
      input_tokens: number;
      output_tokens: number;
      input_tokens_details: { text_tokens: number; image_tokens: number };
    };
    expect(usage.input_tokens_details).toEqual({ text_tokens: 3, image_tokens: 0 });
    expect(usage.input_tokens).toBe(3);
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  });

  it('answers url items pointing at downloadable PNG files for std-image, counting reference images as image tokens', async () => {
    const server = await sim();
    const { json } = await postJson(`${server.base}${IMAGES}`, {
      model: 'std-image',
      prompt: 'p',
      n: 2,
      size: '256x128',
      images: ['https://example.com/a.png'],
    });
    const items = json.data as Item[];
    expect(items).toHaveLength(2);
    for (const [index, item] of items.entries()) {
      expect(item.url).toMatch(new RegExp(`^${server.base}/files/sim_[\\w-]+\\.[\\w-]+/${index}\\.png$`));
      const file = await download(item.url!);
      expect(file.type).toBe('image/png');
      expect(expectPng(file.bytes)).toEqual({ width: 256, height: 128 });
    }
    expect((json.usage as { input_tokens_details: { image_tokens: number } }).input_tokens_details.image_tokens).toBeGreaterThan(0);
  });

  it('waits two steps before answering', async () => {
    const server = await sim(100);
    const started = Date.now();
    const { status } = await postJson(`${server.base}${IMAGES}`, { model: 'std-image', prompt: 'p' });
    expect(status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('maps [sim:reject] to 400, [sim:5xx] to 503 and [sim:fail] to 500 upstream_failed', async () => {
    const server = await sim();
    for (const [marker, status, code] of [
      ['[sim:reject]', 400, 'invalid_request'],
      ['[sim:5xx]', 503, 'upstream_unavailable'],
      ['[sim:fail]', 500, 'upstream_failed'],
    ] as const) {
      const res = await postJson(`${server.base}${IMAGES}`, { model: 'pro-image', prompt: `p ${marker}` });
      expect({ marker, status: res.status, body: res.json }).toEqual({ marker, status, body: { code, message: expect.any(String) } });
    }
  });

  it('[sim:partial] returns one image fewer than asked', async () => {
    const server = await sim();
    const { json } = await postJson(`${server.base}${IMAGES}`, { model: 'pro-image', prompt: 'p [sim:partial]', n: 3 });
    expect((json.data as Item[]).length).toBe(2);
  });

  it('refuses missing auth with 401 and a missing prompt with 400', async () => {
    const server = await sim();
    expect((await postJson(`${server.base}${IMAGES}`, { model: 'pro-image', prompt: 'p' }, {})).status).toBe(401);
    const res = await postJson(`${server.base}${IMAGES}`, { model: 'pro-image' });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('invalid_request');
  });
});

describe('sync images upstream: POST /v1/chat/completions', () => {
  it('answers a chat.completion whose content is a Markdown link to a downloadable PNG, with token usage', async () => {
    const server = await sim();
    const { status, json } = await postJson(`${server.base}${CHAT}`, {
      model: 'std-image',
      size: '512x512',
      messages: [
        { role: 'system', content: 'you draw' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a lighthouse at dusk' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ object: 'chat.completion', model: 'std-image', created: expect.any(Number) });
    expect(json.id).toMatch(/^chatcmpl-/);
    const choices = json.choices as Array<{ index: number; message: { role: string; content: string }; finish_reason: string }>;
    expect(choices).toHaveLength(1);
    expect(choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant' } });
    const link = /^!\[[^\]]*\]\((\S+)\)$/.exec(choices[0]!.message.content);
    expect(link).not.toBeNull();
    const file = await download(link![1]!);
    expect(file.status).toBe(200);
    expect(expectPng(file.bytes)).toEqual({ width: 512, height: 512 });
    const usage = json.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    expect(usage.prompt_tokens).toBeGreaterThan(5);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('maps markers in the user message to 400, 503 and 500', async () => {
    const server = await sim();
    for (const [marker, status] of [
      ['[sim:reject]', 400],
      ['[sim:5xx]', 503],
      ['[sim:fail]', 500],
    ] as const) {
      const res = await postJson(`${server.base}${CHAT}`, { model: 'pro-image', messages: [{ role: 'user', content: `cat ${marker}` }] });
      expect(res.status).toBe(status);
    }
  });

  it('rejects a conversation without user prompt text as 400 invalid_request', async () => {
    const server = await sim();
    const res = await postJson(`${server.base}${CHAT}`, {
      model: 'pro-image',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
    });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('invalid_request');
  });
});
