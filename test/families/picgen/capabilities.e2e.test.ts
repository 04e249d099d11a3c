/**
 * Every row of the picgen capability table (spec 4.7), black-box over HTTP: presets (case-
 * insensitive), the custom pixel-area range at both ends, sequential generation, layers,
 * output format, tools and fast prompt optimisation — accepted where the row says yes,
 * refused with `{code, message}` naming the field where it says no.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Client, type TestGateway } from '../../support/gateway.js';
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

type Row = {
  model: string;
  presets: string[];
  area: [number, number];
  /** Custom sizes at and just past the area limits. */
  minOk: string;
  belowMin: string;
  maxOk: string;
  aboveMax: string;
  sequential: boolean;
  layers: boolean;
  outputFormat: boolean;
  tools: boolean;
  fast: boolean;
};

const ROWS: Row[] = [
  {
    model: 'vendor-picgen-5-0-pro-260628',
    presets: ['1K', '1.5K', '2K'],
    area: [921_600, 4_624_220],
    minOk: '960x960',
    belowMin: '959x960',
    maxOk: '2150x2150',
    aboveMax: '2151x2150',
    sequential: false,
    layers: true,
    outputFormat: true,
    tools: false,
    fast: true,
  },
  {
    model: 'vendor-picgen-5-0-flash-260915',
    presets: ['1K', '1.5K', '2K'],
    area: [921_600, 4_624_220],
    minOk: '1280x720',
    belowMin: '1279x720',
    maxOk: '2150x2150',
    aboveMax: '2151x2150',
    sequential: false,
    layers: true,
    outputFormat: true,
    tools: false,
    fast: false,
  },
  {
    model: 'vendor-picgen-5-0-lite-260128',
    presets: ['2K', '3K', '4K'],
    area: [3_686_400, 16_777_216],
    minOk: '1920x1920',
    belowMin: '1919x1920',
    maxOk: '4096x4096',
    aboveMax: '4097x4096',
    sequential: true,
    layers: false,
    outputFormat: true,
    tools: true,
    fast: false,
  },
  {
    model: 'vendor-picgen-5-0-260128',
    presets: ['2K', '3K', '4K'],
    area: [3_686_400, 16_777_216],
    minOk: '2560x1440',
    belowMin: '2559x1440',
    maxOk: '4096x4096',
    aboveMax: '4096x4097',
    sequential: true,
    layers: false,
    outputFormat: true,
    tools: true,
    fast: false,
  },
  {
    model: 'vendor-picgen-4-5-251128',
    presets: ['2K', '4K'],
    area: [3_686_400, 16_777_216],
    minOk: '1920x1920',
    belowMin: '1920x1919',
    maxOk: '4096x4096',
    aboveMax: '4097x4097',
    sequential: true,
    layers: false,
    outputFormat: false,
    tools: false,
    fast: false,
  },
  {
    model: 'vendor-picgen-4-0-250828',
    presets: ['1K', '2K', '4K'],
    area: [921_600, 16_777_216],
    minOk: '960x960',
    belowMin: '960x959',
    maxOk: '4096x4096',
    aboveMax: '4097x4096',
    sequential: true,
    layers: false,
    outputFormat: false,
    tools: false,
    fast: true,
  },
];
const ALL_PRESETS = ['1K', '1.5K', '2K', '3K', '4K'];
const REFERENCE = 'https://example.com/ref.png';

const generate = (body: Record<string, unknown>) => api.post('/v1/images/generations', { prompt: 'a lighthouse', ...body });
const edit = (body: Record<string, unknown>) => api.post('/v1/images/edits', { prompt: 'a lighthouse', image: REFERENCE, ...body });

async function expectAccepted(reply: Awaited<ReturnType<typeof generate>>, images = 1) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  expect(reply.body.created).toEqual(expect.any(Number));
  expect(reply.body.data).toHaveLength(images);
  return lastCall(gw, accountId);
}

async function expectRefused(send: () => ReturnType<typeof generate>, field: string) {
  await expectNothingAppended(gw, async () => {
    const reply = await send();
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual(plainError('invalid_request'));
    expect(reply.body.message.startsWith(`${field}:`), reply.body.message).toBe(true);
  });
}

describe.each(ROWS)('$model', (row) => {
  const { model } = row;

  it.each(row.presets)('preset %s is accepted in any case, sent in its canonical spelling, priced at its tier', async (preset) => {
    const call = await expectAccepted(await generate({ model, size: preset.toLowerCase() }));
    expect(call.submitted.request.size).toBe(preset);
    expect(call.reserved.basis.tier).toBe(preset);
  });

  it.each(ALL_PRESETS.filter((p) => !row.presets.includes(p)))('preset %s (not in the row) is refused', async (preset) => {
    await expectRefused(() => generate({ model, size: preset }), 'size');
  });

  it(`custom sizes: the pixel area ${row.area[0]}–${row.area[1]} is inclusive at both ends`, async () => {
    for (const ok of [row.minOk, row.maxOk]) {
      const call = await expectAccepted(await generate({ model, size: ok }));
      expect(call.submitted.request.size).toBe(ok);
    }
    for (const bad of [row.belowMin, row.aboveMax]) await expectRefused(() => generate({ model, size: bad }), 'size');
  });

  it(`sequential generation: ${row.sequential ? 'accepted' : 'refused'}`, async () => {
    const body = { model, sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 2 } };
    if (row.sequential) {
      const call = await expectAccepted(await generate(body), 2);
      expect(call.submitted.request).toMatchObject({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 2 } });
      expect(call.settled?.basis.units).toBe(2);
    } else {
      await expectRefused(() => generate(body), 'sequential_image_generation');
      await expectRefused(() => generate({ model, sequential_image_generation_options: { max_images: 2 } }), 'sequential_image_generation_options');
    }
  });

  it(`layer decomposition: ${row.layers ? 'accepted on edits with one image' : 'refused'}; never on generations`, async () => {
    await expectRefused(() => generate({ model, layer_decomposition: true }), 'layer_decomposition');
    if (row.layers) {
      const call = await expectAccepted(await edit({ model, layer_decomposition: true, size: '1.5k' }), 3);
      expect(call.submitted).toMatchObject({ action: 'layers', request: { layer_decomposition: true, size: '1.5K' } });
      expect(call.settled?.basis.units).toBe(3);
    } else {
      await expectRefused(() => edit({ model, layer_decomposition: true }), 'layer_decomposition');
    }
  });

  it(`output_format: ${row.outputFormat ? 'png and jpeg accepted' : 'refused'}`, async () => {
    for (const format of ['png', 'jpeg']) {
      if (row.outputFormat) expect((await expectAccepted(await generate({ model, output_format: format }))).submitted.request.output_format).toBe(format);
      else await expectRefused(() => generate({ model, output_format: format }), 'output_format');
    }
  });

  it(`tools: ${row.tools ? 'accepted' : 'refused'}`, async () => {
    const tools = [{ type: 'web_search' }];
    if (row.tools) expect((await expectAccepted(await generate({ model, tools }))).submitted.request.tools).toEqual(tools);
    else await expectRefused(() => generate({ model, tools }), 'tools');
  });

  it(`optimize_prompt_options.mode fast: ${row.fast ? 'accepted' : 'refused'}; standard everywhere`, async () => {
    const fast = { model, optimize_prompt: true, optimize_prompt_options: { mode: 'fast' } };
    if (row.fast) expect((await expectAccepted(await generate(fast))).submitted.request.optimize_prompt_options).toEqual({ mode: 'fast' });
    else await expectRefused(() => generate(fast), 'optimize_prompt_options.mode');
    await expectAccepted(await generate({ model, optimize_prompt_options: { mode: 'standard' } }));
  });

  it(`edit references: at most ${row.layers ? 10 : 14}`, async () => {
    const max = row.layers ? 10 : 14;
    const refs = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${i}.png`);
    await expectAccepted(await edit({ model, image: refs(max) }));
    await expectRefused(() => edit({ model, image: refs(max + 1) }), 'image');
  });
});
