/**
 * `POST /v1/images/edits` for picgen (spec 4.8), black-box over HTTP: every rule in JSON and
 * in multipart (files, parsed numbers, booleans and JSON strings, once-only fields, 30 MiB).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Client, type TestGateway } from '../../support/gateway.js';
import { expectNothingAppended, lastCall, syncUser, TINY_PNG, TINY_PNG_URI } from '../../support/sync-images.js';
import { plainError } from '../../support/errors.js';

let gw: TestGateway;
let api: Client;
let key: string;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '0' });
  ({ api, accountId, key } = await syncUser(gw, 500_000_000));
});
afterAll(() => gw.close());

const PRO = 'vendor-picgen-5-0-pro-260628';
const FLASH = 'vendor-picgen-5-0-flash-260915';
const V50 = 'vendor-picgen-5-0-260128';
const V40 = 'vendor-picgen-4-0-250828';
const URL_A = 'https://example.com/a.png';
const refs = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${i}.png`);
const edit = (body: Record<string, unknown>) => api.post('/v1/images/edits', body);

type Accept = [
  name: string,
  body: Record<string, unknown>,
  forwarded: Record<string, unknown>,
  extra?: { images?: number; units?: number; tier?: string; action?: string; absent?: string[] },
];

const accepts: Accept[] = [
  [
    'one URL as a string; size omitted: estimated auto, not sent',
    { model: V40, prompt: 'p', image: URL_A },
    { image: URL_A, prompt: 'p' },
    { action: 'edit', tier: 'auto', absent: ['size'] },
  ],
  [
    'an array of URLs and data URIs',
    { model: V50, prompt: 'p', image: [URL_A, TINY_PNG_URI] },
    { image: [URL_A, expect.stringMatching(/^data:image\/png;base64,…\(\d+ bytes\)$/)] },
  ],
  ['data URI of another lowercase format', { model: V40, prompt: 'p', image: 'data:image/webp;base64,UklGRg==' }, {}],
  [
    'layers on 5.0 Pro: one image, no prompt, size omitted (estimated auto, not sent)',
    { model: PRO, image: URL_A, layer_decomposition: true },
    { layer_decomposition: true },
    { images: 3, action: 'layers', tier: 'auto', absent: ['prompt', 'size'] },
  ],
  [
    'layers on 5.0 Flash with size auto and an empty prompt',
    { model: FLASH, image: URL_A, layer_decomposition: true, size: 'AUTO', prompt: '' },
    { size: 'auto', prompt: '' },
    { images: 3, tier: 'auto', action: 'layers' },
  ],
  ['layers with size 1K', { model: PRO, image: URL_A, layer_decomposition: true, size: '1k' }, { size: '1K' }, { images: 3, action: 'layers' }],
  [
    'layers with size 2K',
    { model: FLASH, image: [URL_A], layer_decomposition: true, size: '2K' },
    { size: '2K', image: [URL_A] },
    { images: 3, action: 'layers' },
  ],
  [
    'transparent background on 5.0 Pro with exactly one reference',
    { model: PRO, prompt: 'p', image: URL_A, background: 'transparent', output_format: 'png' },
    { background: 'transparent', output_format: 'png' },
  ],
  [
    'sequential: 14 references plus 1 image',
    { model: V40, prompt: 'p', image: refs(14), sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 1 } },
    { sequential_image_generation: 'auto' },
    { units: 1 },
  ],
  [
    'sequential without max_images: reserved for 15 minus the references',
    { model: V40, prompt: 'p', image: refs(12), sequential_image_generation: 'auto' },
    {},
    { images: 3, units: 3 },
  ],
  [
    'every 4.7 option',
    {
      model: V50,
      prompt: 'p',
      image: URL_A,
      size: '3k',
      n: 1,
      stream: false,
      seed: 7,
      guidance_scale: 2.5,
      watermark: false,
      optimize_prompt: true,
      optimize_prompt_options: { mode: 'standard' },
      output_format: 'jpeg',
      background: 'opaque',
      tools: [{ type: 'web_search' }],
      response_format: 'url',
    },
    {
      size: '3K',
      seed: 7,
      guidance_scale: 2.5,
      watermark: false,
      optimize_prompt: true,
      optimize_prompt_options: { mode: 'standard' },
      output_format: 'jpeg',
      background: 'opaque',
      tools: [{ type: 'web_search' }],
    },
    { tier: '3K', absent: ['n', 'stream', 'response_format'] },
  ],
];

describe('picgen edits (JSON): accepted', () => {
  it.each(accepts)('%s', async (_name, body, forwarded, extra = {}) => {
    const r = await edit(body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(extra.images ?? 1);
    const call = await lastCall(gw, accountId);
    expect(call.submitted).toMatchObject({ family: 'picgen-sync', action: extra.action ?? 'edit' });
    expect(call.submitted.request).toMatchObject(forwarded);
    for (const k of extra.absent ?? []) expect(call.submitted.request).not.toHaveProperty(k);
    if (extra.units !== undefined) expect(call.reserved.basis.units).toBe(extra.units);
    if (extra.tier !== undefined) expect(call.reserved.basis.tier).toBe(extra.tier);
    expect(call.settled?.basis.units).toBe(extra.images ?? 1);
  });
});

type Refuse = [name: string, body: Record<string, unknown>, field: string];

const refuses: Refuse[] = [
  ['model missing', { prompt: 'p', image: URL_A }, 'model'],
  ['model not a sync picgen model', { model: 'picgen-4-0-250828', prompt: 'p', image: URL_A }, 'model'],
  ['image missing', { model: V40, prompt: 'p' }, 'image'],
  ['image empty array', { model: V40, prompt: 'p', image: [] }, 'image'],
  ['image a number', { model: V40, prompt: 'p', image: 5 }, 'image'],
  ['image ftp URL', { model: V40, prompt: 'p', image: 'ftp://example.com/a.png' }, 'image'],
  ['image data URI with uppercase MIME format', { model: V40, prompt: 'p', image: 'data:image/PNG;base64,iVBORw0KGgo=' }, 'image'],
  ['image data URI not Base64', { model: V40, prompt: 'p', image: [URL_A, 'data:image/png;base64,@@@'] }, 'image.1'],
  ['image data URI of another type', { model: V40, prompt: 'p', image: 'data:text/plain;base64,aGk=' }, 'image'],
  ['11 references on 5.0 Pro', { model: PRO, prompt: 'p', image: refs(11) }, 'image'],
  ['11 references on 5.0 Flash', { model: FLASH, prompt: 'p', image: refs(11) }, 'image'],
  ['15 references on 4.0', { model: V40, prompt: 'p', image: refs(15) }, 'image'],
  ['prompt missing on an ordinary edit', { model: V40, image: URL_A }, 'prompt'],
  ['prompt empty on an ordinary edit', { model: V40, image: URL_A, prompt: '' }, 'prompt'],
  ['layers with a non-string prompt', { model: PRO, image: URL_A, layer_decomposition: true, prompt: 5 }, 'prompt'],
  ['layers with two images', { model: PRO, image: [URL_A, URL_A], layer_decomposition: true }, 'image'],
  ['layers on 5.0', { model: V50, image: URL_A, layer_decomposition: true }, 'layer_decomposition'],
  ['layers on 4.0', { model: V40, image: URL_A, prompt: 'p', layer_decomposition: true }, 'layer_decomposition'],
  ['layers with size 4K', { model: PRO, image: URL_A, layer_decomposition: true, size: '4K' }, 'size'],
  ['layers with custom dimensions', { model: PRO, image: URL_A, layer_decomposition: true, size: '1024x1024' }, 'size'],
  ['size auto on an ordinary edit', { model: PRO, image: URL_A, prompt: 'p', size: 'auto' }, 'size'],
  ['transparent on 5.0 Pro with two references', { model: PRO, prompt: 'p', image: [URL_A, URL_A], background: 'transparent' }, 'background'],
  ['transparent on 5.0 Flash with jpeg', { model: FLASH, prompt: 'p', image: URL_A, background: 'transparent', output_format: 'jpeg' }, 'background'],
  [
    'sequential: 14 references plus 2 images',
    { model: V40, prompt: 'p', image: refs(14), sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 2 } },
    'sequential_image_generation_options.max_images',
  ],
  ['sequential on 5.0 Flash', { model: FLASH, prompt: 'p', image: URL_A, sequential_image_generation: 'auto' }, 'sequential_image_generation'],
  ['n 2', { model: V40, prompt: 'p', image: URL_A, n: 2 }, 'n'],
  ['stream true', { model: V40, prompt: 'p', image: URL_A, stream: true }, 'stream'],
  ['mask', { model: V40, prompt: 'p', image: URL_A, mask: URL_A }, 'mask'],
  ['mask null still carries a mask', { model: V40, prompt: 'p', image: URL_A, mask: null }, 'mask'],
  ['tools on 4.5', { model: 'vendor-picgen-4-5-251128', prompt: 'p', image: URL_A, tools: [{ type: 'x' }] }, 'tools'],
  ['output_format on 4.0', { model: V40, prompt: 'p', image: URL_A, output_format: 'png' }, 'output_format'],
  ['fast prompt on 5.0', { model: V50, prompt: 'p', image: URL_A, optimize_prompt_options: { mode: 'fast' } }, 'optimize_prompt_options.mode'],
  ['response_format unknown', { model: V40, prompt: 'p', image: URL_A, response_format: 'file' }, 'response_format'],
];

describe('picgen edits (JSON): refused with {code, message} naming the field, nothing appended', () => {
  it.each(refuses)('%s → %s', async (_name, body, field) => {
    await expectNothingAppended(gw, async () => {
      const r = await edit(body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual(plainError('invalid_request'));
      expect(r.body.message.startsWith(`${field}:`), r.body.message).toBe(true);
    });
  });
});

async function postForm(form: FormData) {
  const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

function form(fields: Record<string, string>, files: Array<[name: string, bytes: Buffer, type?: string]> = []): FormData {
  const f = new FormData();
  for (const [name, value] of Object.entries(fields)) f.append(name, value);
  for (const [name, bytes, type] of files) f.append(name, new Blob([bytes], type ? { type } : {}), 'file.png');
  return f;
}

describe('picgen edits (multipart)', () => {
  it('files under image[] and text fields parsed as numbers, booleans and JSON', async () => {
    const r = await postForm(
      form(
        {
          model: V50,
          prompt: 'p',
          n: '1',
          seed: '42',
          guidance_scale: '5.5',
          watermark: 'false',
          stream: 'false',
          optimize_prompt: 'true',
          tools: '[{"type":"web_search"}]',
          optimize_prompt_options: 'null',
          sequential_image_generation: 'auto',
          sequential_image_generation_options: '{"max_images":2}',
        },
        [
          ['image[]', TINY_PNG, 'image/png'],
          ['image[]', TINY_PNG],
        ],
      ),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(2);
    const call = await lastCall(gw, accountId);
    expect(call.submitted.request).toMatchObject({
      image: [expect.stringMatching(/^data:image\/png;base64,/), expect.stringMatching(/^data:image\/png;base64,/)],
      seed: 42,
      guidance_scale: 5.5,
      watermark: false,
      optimize_prompt: true,
      optimize_prompt_options: null,
      tools: [{ type: 'web_search' }],
      sequential_image_generation_options: { max_images: 2 },
    });
  });

  it('a field the rules do not read may repeat (an array, as OpenAPI encodes one); one they read, even as tools[], may not', async () => {
    const extra = form({ model: V40, prompt: 'p', image: URL_A });
    extra.append('x-client-tag', 'a');
    extra.append('x-client-tag', 'b');
    const taken = await postForm(extra);
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    const listed = form({ model: V50, prompt: 'p', image: URL_A });
    listed.append('tools[]', '{"type":"web_search"}');
    listed.append('tools[]', '{"type":"web_search"}');
    const refused = await postForm(listed);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('tools[]: may appear only once in the form');
  });

  it("parts declared application/json (the document's encoding) bring their JSON values: image as a list, tools as an array", async () => {
    // Written by hand: FormData gives every Blob a filename, which would make the part a file.
    const boundary = 'j50nparts';
    const part = (name: string, value: string, type?: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n${type ? `Content-Type: ${type}\r\n` : ''}\r\n${value}\r\n`;
    const body = [
      part('model', V50),
      part('prompt', 'p'),
      part('image', JSON.stringify([URL_A, URL_A]), 'application/json'),
      part('tools', JSON.stringify([{ type: 'web_search' }]), 'application/json'),
      `--${boundary}--\r\n`,
    ].join('');
    const res = await fetch(`${gw.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const call = await lastCall(gw, accountId);
    expect(call.submitted.request).toMatchObject({ image: [URL_A, URL_A], tools: [{ type: 'web_search' }] });
  });

  it('indexed image[n] files in the order of n, a URL given as a text image field, and a single image file as a string', async () => {
    const indexed = await postForm(form({ model: V40, prompt: 'p', 'image[1]': URL_A }, [['image[0]', TINY_PNG, 'image/png']]));
    expect(indexed.status, JSON.stringify(indexed.body)).toBe(200);
    expect((await lastCall(gw, accountId)).submitted.request.image).toEqual([expect.stringMatching(/^data:image\/png/), URL_A]);
    const single = await postForm(form({ model: PRO, layer_decomposition: 'true' }, [['image', TINY_PNG, 'image/png']]));
    expect(single.status, JSON.stringify(single.body)).toBe(200);
    expect(single.body.data).toHaveLength(3);
    expect((await lastCall(gw, accountId)).submitted.request).toMatchObject({ image: expect.stringMatching(/^data:image\/png/), layer_decomposition: true });
  });

  const refusedForms: Array<[name: string, make: () => FormData, field: string]> = [
    [
      'a field twice',
      () => {
        const f = form({ model: V40, prompt: 'p' }, [['image', TINY_PNG, 'image/png']]);
        f.append('prompt', 'again');
        return f;
      },
      'prompt',
    ],
    ['a number field that is not a number', () => form({ model: V40, prompt: 'p', seed: 'abc' }, [['image', TINY_PNG, 'image/png']]), 'seed'],
    ['n "2"', () => form({ model: V40, prompt: 'p', n: '2' }, [['image', TINY_PNG, 'image/png']]), 'n'],
    ['a boolean field that is not true/false', () => form({ model: V40, prompt: 'p', watermark: 'yes' }, [['image', TINY_PNG, 'image/png']]), 'watermark'],
    ['stream "true"', () => form({ model: V40, prompt: 'p', stream: 'true' }, [['image', TINY_PNG, 'image/png']]), 'stream'],
    ['a JSON field that is not JSON', () => form({ model: V50, prompt: 'p', tools: '[{type:x}]' }, [['image', TINY_PNG, 'image/png']]), 'tools'],
    ['a file that is not an image', () => form({ model: V40, prompt: 'p' }, [['image', Buffer.from('hello'), 'text/plain']]), 'image.0'],
    ['an empty file', () => form({ model: V40, prompt: 'p' }, [['image', Buffer.alloc(0), 'image/png']]), 'image.0'],
    [
      'a mask file',
      () =>
        form({ model: V40, prompt: 'p' }, [
          ['image', TINY_PNG, 'image/png'],
          ['mask', TINY_PNG, 'image/png'],
        ]),
      'mask',
    ],
    ['a file under another field', () => form({ model: V40, prompt: 'p' }, [['photo', TINY_PNG, 'image/png']]), 'photo'],
    ['no image', () => form({ model: V40, prompt: 'p' }), 'image'],
    [
      '11 files on 5.0 Pro',
      () =>
        form(
          { model: PRO, prompt: 'p' },
          Array.from({ length: 11 }, () => ['image[]', TINY_PNG, 'image/png'] as [string, Buffer, string]),
        ),
      'image',
    ],
  ];

  it.each(refusedForms)('%s → %s', async (_name, make, field) => {
    await expectNothingAppended(gw, async () => {
      const r = await postForm(make());
      expect(r.status).toBe(400);
      expect(r.body).toEqual(plainError('invalid_request'));
      expect(r.body.message.startsWith(`${field}:`), r.body.message).toBe(true);
    });
  });

  it('a file over 30 MiB is refused with 413 naming image', async () => {
    const big = Buffer.alloc(30 * 1024 * 1024 + 1);
    TINY_PNG.copy(big);
    await expectNothingAppended(gw, async () => {
      const r = await postForm(form({ model: V40, prompt: 'p' }, [['image', big, 'image/png']]));
      expect(r.status).toBe(413);
      expect(r.body).toEqual(plainError('request_too_large', expect.stringMatching(/^image: /), 'image'));
    });
  });

  it('more than 14 files are refused with 413 naming image', async () => {
    const files = Array.from({ length: 15 }, () => ['image[]', TINY_PNG, 'image/png'] as [string, Buffer, string]);
    const r = await postForm(form({ model: V40, prompt: 'p' }, files));
    expect(r.status).toBe(413);
    expect(r.body.message).toMatch(/^image: /);
  });
});
