/**
 * Every field rule of `POST /v1/images/generations` for picgen (spec 4.7), accepted and
 * refused, black-box over HTTP: refusals are 400 `{code: invalid_request, message}` whose
 * message starts with the field and append nothing; acceptances forward only known fields.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Client, type TestGateway } from '../../support/gateway.js';
import { pngSize } from '../../support/images.js';
import { expectNothingAppended, lastCall, syncUser } from '../../support/sync-images.js';
import { plainError } from '../../support/errors.js';

let gw: TestGateway;
let api: Client;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '0' });
  ({ api, accountId } = await syncUser(gw, 500_000_000));
});
afterAll(() => gw.close());

const V40 = 'vendor-picgen-4-0-250828';
const V50 = 'vendor-picgen-5-0-260128';
const PRO = 'vendor-picgen-5-0-pro-260628';
const generate = (body: Record<string, unknown>) => api.post('/v1/images/generations', body);

type Accept = [name: string, body: Record<string, unknown>, forwarded: Record<string, unknown>, extra?: { units?: number; tier?: string; absent?: string[] }];

const accepts: Accept[] = [
  ['size omitted: estimated 2K, not sent', { model: V40, prompt: 'p' }, { model: V40, prompt: 'p' }, { tier: '2K', absent: ['size'] }],
  ['custom size with x', { model: V40, prompt: 'p', size: '1280x1024' }, { size: '1280x1024' }, { tier: '1K' }],
  ['custom size with X', { model: V40, prompt: 'p', size: '1280X1024' }, { size: '1280x1024' }],
  ['custom size with ×', { model: V40, prompt: 'p', size: '1280×1024' }, { size: '1280x1024' }],
  ['custom size with *', { model: V40, prompt: 'p', size: '1280*1024' }, { size: '1280x1024' }],
  ['ratio exactly 16:1', { model: V40, prompt: 'p', size: '4096x256' }, { size: '4096x256' }],
  ['ratio exactly 1:16', { model: V40, prompt: 'p', size: '256x4096' }, { size: '256x4096' }],
  ['custom size priced at the nearest preset', { model: V50, prompt: 'p', size: '3840x2160' }, { size: '3840x2160' }, { tier: '3K' }],
  ['n 1', { model: V40, prompt: 'p', n: 1 }, {}, { absent: ['n'] }],
  ['stream false', { model: V40, prompt: 'p', stream: false }, {}, { absent: ['stream'] }],
  ['seed integer (negative too)', { model: V40, prompt: 'p', seed: -1 }, { seed: -1 }],
  ['guidance_scale finite number', { model: V40, prompt: 'p', guidance_scale: 7.5 }, { guidance_scale: 7.5 }],
  ['watermark and optimize_prompt booleans', { model: V40, prompt: 'p', watermark: true, optimize_prompt: false }, { watermark: true, optimize_prompt: false }],
  ['optimize_prompt_options null', { model: V50, prompt: 'p', optimize_prompt_options: null }, { optimize_prompt_options: null }],
  ['optimize_prompt_options without mode', { model: V50, prompt: 'p', optimize_prompt_options: {} }, { optimize_prompt_options: {} }],
  ['background opaque', { model: PRO, prompt: 'p', background: 'opaque' }, { background: 'opaque' }],
  [
    'background transparent forwarded on 5.0 (the upstream decides)',
    { model: V50, prompt: 'p', background: 'transparent', output_format: 'jpeg' },
    { background: 'transparent', output_format: 'jpeg' },
  ],
  ['background transparent forwarded on 4.0', { model: V40, prompt: 'p', background: 'transparent' }, { background: 'transparent' }],
  ['tools with extra keys kept', { model: V50, prompt: 'p', tools: [{ type: 'web_search', max: 2 }] }, { tools: [{ type: 'web_search', max: 2 }] }],
  [
    'sequential disabled on a model without series: accepted, not sent',
    { model: PRO, prompt: 'p', sequential_image_generation: 'disabled' },
    {},
    { absent: ['sequential_image_generation'] },
  ],
  [
    'sequential disabled on 4.0: sent',
    { model: V40, prompt: 'p', sequential_image_generation: 'disabled' },
    { sequential_image_generation: 'disabled' },
    { units: 1 },
  ],
  [
    'sequential auto, max_images 15',
    { model: V40, prompt: 'p', size: '1K', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 15 } },
    { sequential_image_generation_options: { max_images: 15 } },
    { units: 15 },
  ],
  [
    'sequential auto without max_images: reserved for 15',
    { model: V40, prompt: 'p', size: '1K', sequential_image_generation: 'auto' },
    { sequential_image_generation: 'auto' },
    { units: 15 },
  ],
  ['layer_decomposition false: accepted, not sent', { model: PRO, prompt: 'p', layer_decomposition: false }, {}, { absent: ['layer_decomposition'] }],
  [
    'unknown fields are not forwarded',
    { model: V40, prompt: 'p', foo: 1, quality: 'high', metadata: { a: 1 } },
    {},
    { absent: ['foo', 'quality', 'metadata'] },
  ],
  ['response_format url', { model: V40, prompt: 'p', response_format: 'url' }, {}, { absent: ['response_format'] }],
];

describe('picgen generations: accepted', () => {
  it.each(accepts)('%s', async (_name, body, forwarded, extra = {}) => {
    const r = await generate(body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['created', 'data']);
    const call = await lastCall(gw, accountId);
    expect(call.submitted).toMatchObject({ family: 'picgen-sync', action: 'generate', sync: true });
    expect(call.submitted.request).toMatchObject(forwarded);
    for (const key of extra.absent ?? []) expect(call.submitted.request).not.toHaveProperty(key);
    if (extra.units !== undefined) expect(call.reserved.basis.units).toBe(extra.units);
    if (extra.tier !== undefined) expect(call.reserved.basis.tier).toBe(extra.tier);
  });

  it('response_format b64_json adds Base64 next to the gateway URL', async () => {
    const r = await generate({ model: V40, prompt: 'p', size: '1K', response_format: 'b64_json' });
    expect(Object.keys(r.body.data[0]).sort()).toEqual(['b64_json', 'url']);
    expect(pngSize(Buffer.from(r.body.data[0].b64_json, 'base64'))).toEqual({ width: 1024, height: 1024 });
    expect(r.body.data[0].url.startsWith(`${gw.url}/assets/`)).toBe(true);
  });

  it('sequential: reserved on max_images, settled on the images returned ([sim:partial])', async () => {
    const r = await generate({
      model: V50,
      prompt: 'series [sim:partial]',
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 4 },
    });
    expect(r.body.data).toHaveLength(3);
    const call = await lastCall(gw, accountId);
    expect(call.reserved.amount).toBe(4 * 20_000);
    expect(call.settled).toMatchObject({ charged: 3 * 20_000, basis: { units: 3 } });
  });
});

type Refuse = [name: string, body: Record<string, unknown>, field: string];

const refuses: Refuse[] = [
  ['body not an object', [1, 2] as unknown as Record<string, unknown>, 'body'],
  ['prompt missing', { model: V40 }, 'prompt'],
  ['prompt empty', { model: V40, prompt: '  ' }, 'prompt'],
  ['prompt not a string', { model: V40, prompt: 5 }, 'prompt'],
  ['size not a string', { model: V40, prompt: 'p', size: 1024 }, 'size'],
  ['size auto on generations', { model: PRO, prompt: 'p', size: 'auto' }, 'size'],
  ['size garbage', { model: V40, prompt: 'p', size: 'big' }, 'size'],
  ['size with a zero side', { model: V40, prompt: 'p', size: '0x1024' }, 'size'],
  ['size with spaces', { model: V40, prompt: 'p', size: '1024 x 1024' }, 'size'],
  ['size fractional', { model: V40, prompt: 'p', size: '1024.5x1024' }, 'size'],
  ['ratio past 16:1', { model: V40, prompt: 'p', size: '4097x256' }, 'size'],
  ['ratio past 1:16', { model: V40, prompt: 'p', size: '256x4097' }, 'size'],
  ['n 2', { model: V40, prompt: 'p', n: 2 }, 'n'],
  ['n "1"', { model: V40, prompt: 'p', n: '1' }, 'n'],
  ['stream true', { model: V40, prompt: 'p', stream: true }, 'stream'],
  ['stream "false"', { model: V40, prompt: 'p', stream: 'false' }, 'stream'],
  ['seed fractional', { model: V40, prompt: 'p', seed: 1.5 }, 'seed'],
  ['seed string', { model: V40, prompt: 'p', seed: '5' }, 'seed'],
  ['guidance_scale string', { model: V40, prompt: 'p', guidance_scale: 'x' }, 'guidance_scale'],
  ['watermark not boolean', { model: V40, prompt: 'p', watermark: 'yes' }, 'watermark'],
  ['optimize_prompt not boolean', { model: V40, prompt: 'p', optimize_prompt: 1 }, 'optimize_prompt'],
  ['optimize_prompt_options not an object', { model: V40, prompt: 'p', optimize_prompt_options: 'fast' }, 'optimize_prompt_options'],
  ['optimize_prompt_options.mode unknown', { model: V40, prompt: 'p', optimize_prompt_options: { mode: 'turbo' } }, 'optimize_prompt_options.mode'],
  ['output_format webp', { model: V50, prompt: 'p', output_format: 'webp' }, 'output_format'],
  ['background unknown', { model: V40, prompt: 'p', background: 'pink' }, 'background'],
  ['background transparent on 5.0 Pro text-only', { model: PRO, prompt: 'p', background: 'transparent' }, 'background'],
  [
    'background transparent on 5.0 Flash text-only',
    { model: 'vendor-picgen-5-0-flash-260915', prompt: 'p', background: 'transparent', output_format: 'png' },
    'background',
  ],
  ['tools empty', { model: V50, prompt: 'p', tools: [] }, 'tools'],
  ['tools not an array', { model: V50, prompt: 'p', tools: { type: 'x' } }, 'tools'],
  ['tool without type', { model: V50, prompt: 'p', tools: [{}] }, 'tools.0.type'],
  ['tool with empty type', { model: V50, prompt: 'p', tools: [{ type: 'web' }, { type: ' ' }] }, 'tools.1.type'],
  ['tool not an object', { model: V50, prompt: 'p', tools: ['web'] }, 'tools.0'],
  ['response_format unknown', { model: V40, prompt: 'p', response_format: 'png' }, 'response_format'],
  ['sequential unknown value', { model: V40, prompt: 'p', sequential_image_generation: 'maybe' }, 'sequential_image_generation'],
  ['sequential options not an object', { model: V40, prompt: 'p', sequential_image_generation_options: 3 }, 'sequential_image_generation_options'],
  [
    'max_images 0',
    { model: V40, prompt: 'p', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 0 } },
    'sequential_image_generation_options.max_images',
  ],
  [
    'max_images 16',
    { model: V40, prompt: 'p', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 16 } },
    'sequential_image_generation_options.max_images',
  ],
  [
    'max_images fractional',
    { model: V40, prompt: 'p', sequential_image_generation_options: { max_images: 2.5 } },
    'sequential_image_generation_options.max_images',
  ],
  ['layer_decomposition true', { model: PRO, prompt: 'p', layer_decomposition: true }, 'layer_decomposition'],
  ['layer_decomposition not boolean', { model: PRO, prompt: 'p', layer_decomposition: 'true' }, 'layer_decomposition'],
  ['reference image on generations', { model: V40, prompt: 'p', image: 'https://example.com/a.png' }, 'image'],
  ['mask', { model: V40, prompt: 'p', mask: 'https://example.com/m.png' }, 'mask'],
];

describe('picgen generations: refused with {code, message} naming the field, nothing appended', () => {
  it.each(refuses)('%s → %s', async (_name, body, field) => {
    await expectNothingAppended(gw, async () => {
      const r = await generate(body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual(plainError('invalid_request'));
      expect(r.body.message.startsWith(`${field}:`), r.body.message).toBe(true);
    });
  });

  it('an unknown model is refused naming model', async () => {
    const r = await generate({ model: 'vendor-picgen-3-0', prompt: 'p' });
    expect(r.body.message).toMatch(/^model: .*vendor-picgen-5-0-pro-260628/);
  });
});
