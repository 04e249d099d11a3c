/**
 * The official `openai` npm client against the gateway: chat completions (plain and streamed),
 * images generate (plain and streamed) and images edit (multipart with two files, picgen).
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBooksBalance } from '../../support/billing.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { FAST_ENGINE, pngSize } from '../../support/images.js';
import { lastCall, syncUser, TINY_PNG } from '../../support/sync-images.js';
import { plainError } from '../../support/errors.js';

let gw: TestGateway;
let client: OpenAI;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  const user = await syncUser(gw);
  accountId = user.accountId;
  client = new OpenAI({ apiKey: user.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(() => gw.close());

/** Fields of 4.5 / 4.7 that the client's parameter types do not know. */
type Extra = Record<string, unknown>;

describe('openai client: chat.completions.create', () => {
  it('plain: the image arrives as a Markdown link to a gateway asset', async () => {
    const params = { model: 'std-image', messages: [{ role: 'user' as const, content: 'a paper crane' }], size: '320x240' } satisfies Extra;
    const completion = await client.chat.completions.create(params as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    const url = /\]\((\S+)\)/.exec(completion.choices[0]!.message.content ?? '')?.[1];
    expect(url?.startsWith(`${gw.url}/assets/`)).toBe(true);
    expect(pngSize(Buffer.from(await (await fetch(url!)).arrayBuffer()))).toEqual({ width: 320, height: 240 });
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('image-to-image with an image_url part', async () => {
    const completion = await client.chat.completions.create({
      model: 'pro-image',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'paint it' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${TINY_PNG.toString('base64')}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0]!.message.content).toMatch(/^!\[image 1\]\(http/);
    expect((await lastCall(gw, accountId)).submitted.action).toBe('chat/edit');
  });

  it('streamed: chunks accumulate into the same content, usage in the last chunk', async () => {
    const stream = await client.chat.completions.create({ model: 'std-image', messages: [{ role: 'user', content: 'a paper boat' }], stream: true });
    let content = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(content).toMatch(/^!\[image 1\]\(http:\/\/127\.0\.0\.1:\d+\/assets\//);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('streamed helper (chat.completions.stream) assembles the final message', async () => {
    const runner = client.chat.completions.stream({ model: 'std-image', messages: [{ role: 'user', content: 'a lantern' }] });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toMatch(/^!\[image 1\]/);
  });

  it("a refusal is raised as the matching API error class, with the gateway's reason (the `error` object beside the spec's {code, message})", async () => {
    const err = await client.chat.completions.create({ model: 'std-image', messages: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', param: 'messages', message: expect.stringMatching(/^400 messages: /) });
  });
});

describe('openai client: images.generate', () => {
  it('plain std-image: url items with revised_prompt and usage', async () => {
    const res = await client.images.generate({ model: 'std-image', prompt: 'a quiet street', size: '1024x1024', ...({ style: 'natural' } as Extra) });
    expect(res.data).toHaveLength(1);
    expect(res.data![0]!.url?.startsWith(`${gw.url}/assets/`)).toBe(true);
    expect(res.data![0]!.revised_prompt).toBe('a quiet street');
    expect(res.usage?.input_tokens_details.text_tokens).toBeGreaterThan(0);
  });

  it('streamed pro-image: partial_image then completed events the client parses', async () => {
    const stream = await client.images.generate({ model: 'pro-image', prompt: 'a glass fish', size: '1536x1024', stream: true });
    const types: string[] = [];
    let completed: OpenAI.Images.ImageGenCompletedEvent | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'image_generation.completed') completed = event;
      else expect(event.partial_image_index).toBe(0);
    }
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.completed']);
    expect(completed).toMatchObject({ size: '1536x1024', quality: 'auto', background: 'auto', output_format: 'png' });
    expect(pngSize(Buffer.from(completed!.b64_json, 'base64'))).toEqual({ width: 1536, height: 1024 });
    expect(completed!.usage.total_tokens).toBeGreaterThan(0);
  });

  it('a streamed failure after the partial image is raised by the client', async () => {
    const stream = await client.images.generate({ model: 'pro-image', prompt: 'broken [sim:fail]', stream: true });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of stream) seen.push(event.type);
      })(),
    ).rejects.toThrow(/simulated generation failure/);
    expect(seen).toEqual(['image_generation.partial_image']);
  });

  it('picgen through the same method: url, and b64_json added on request', async () => {
    const res = await client.images.generate({ model: 'vendor-picgen-4-0-250828', prompt: 'a tower', size: '1K', response_format: 'b64_json' });
    expect(res.data![0]!.url?.startsWith(`${gw.url}/assets/`)).toBe(true);
    expect(pngSize(Buffer.from(res.data![0]!.b64_json!, 'base64'))).toEqual({ width: 1024, height: 1024 });
  });
});

describe('openai client: images.edit (multipart)', () => {
  it('two files under image[] reach the upstream as two data URIs; settled on the images returned', async () => {
    const files = [await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), await toFile(TINY_PNG, 'b.png')];
    const res = await client.images.edit({
      model: 'vendor-picgen-5-0-260128',
      image: files,
      prompt: 'merge the two',
      size: '2k',
      ...({ seed: 42, watermark: false, sequential_image_generation: 'auto', sequential_image_generation_options: JSON.stringify({ max_images: 2 }) } as Extra),
    });
    expect(res.data).toHaveLength(2);
    for (const item of res.data!) expect(pngSize(Buffer.from(await (await fetch(item.url!)).arrayBuffer()))).toEqual({ width: 2048, height: 2048 });
    const call = await lastCall(gw, accountId);
    expect(call.submitted).toMatchObject({ family: 'picgen-sync', action: 'edit' });
    expect(call.submitted.request).toMatchObject({
      model: 'vendor-picgen-5-0-260128',
      image: [expect.stringMatching(/^data:image\/png;base64,…\(\d+ bytes\)$/), expect.stringMatching(/^data:image\/png;base64,…/)],
      size: '2K',
      seed: 42,
      watermark: false,
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 2 },
    });
    expect(call.reserved.basis).toMatchObject({ units: 2, tier: '2K' });
    expect(call.settled).toMatchObject({ charged: 2 * 20_000 });
  });

  it('a mask is refused with the field named', async () => {
    const err = await client.images
      .edit({
        model: 'vendor-picgen-4-0-250828',
        image: await toFile(TINY_PNG, 'a.png', { type: 'image/png' }),
        mask: await toFile(TINY_PNG, 'm.png', { type: 'image/png' }),
        prompt: 'x',
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ code: 'invalid_request', param: 'mask', message: expect.stringMatching(/^400 mask: /) });
    const form = new FormData();
    form.append('model', 'vendor-picgen-4-0-250828');
    form.append('prompt', 'x');
    form.append('image', new Blob([TINY_PNG], { type: 'image/png' }), 'a.png');
    form.append('mask', new Blob([TINY_PNG], { type: 'image/png' }), 'm.png');
    const raw = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${client.apiKey}` }, body: form });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual(plainError('invalid_request', expect.stringMatching(/^mask: /), 'mask'));
  });

  it('after all calls the books balance', async () => {
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    await expectBooksBalance(gw, accountId);
  });
});
