import { describe, expect, it } from 'vitest';
import { animeModels, picgenAsyncModels, visEditModels, visGenerationModels } from '../../../src/families/images/catalog.js';
import { type AsyncImagePlan, asyncImageFamilyOf, planAsyncImageRequest } from '../../../src/families/images/async-request.js';
import { isHttpUrl, isImageDataUri, placeholderFor } from '../../../src/families/kit/fields.js';
import { nearestRatio } from '../../../src/families/images/rules/vis.js';

const URL_A = 'https://img.example.com/a.png';
const URL_B = 'http://img.example.com/b.jpg';
const URL_C = 'https://cdn.example.org/c.webp?x=1';
const URL_D = 'https://cdn.example.org/d.png';
const URL_E = 'https://cdn.example.org/e.png';
const URL_F = 'https://cdn.example.org/f.png';
/** 12 bytes of PNG-ish data → 16 Base64 characters. */
const PNG_B64 = Buffer.from('0123456789ab').toString('base64');
const DATA_PNG = `data:image/png;base64,${PNG_B64}`;
const DATA_PNG_PLACEHOLDER = 'data:image/png;base64,…(12 bytes)';
/** 12345 bytes: the example of the brief. */
const BIG_B64 = Buffer.alloc(12345, 7).toString('base64');
const DATA_BIG_JPEG = `data:image/jpeg;base64,${BIG_B64}`;

function accepted(body: unknown): AsyncImagePlan {
  const result = planAsyncImageRequest(body);
  if (!result.ok) throw new Error(`expected acceptance, got ${result.param}: ${result.message}`);
  return result.plan;
}

type Accept = {
  name: string;
  body: Record<string, unknown>;
  expected: Pick<AsyncImagePlan, 'family' | 'action' | 'units' | 'upstream'> & { recorded?: Record<string, unknown> };
};

const accepts: Accept[] = [
  // ---- pro-image ----
  {
    name: 'pro-image text-to-image, n defaults to 1, unknown fields dropped',
    body: { model: 'pro-image', prompt: 'a cat', style: 'vivid', stream: true },
    expected: { family: 'pro-image', action: 'generate', units: 1, upstream: { model: 'pro-image', prompt: 'a cat', n: 1 } },
  },
  {
    name: 'pro-image with every option',
    body: {
      model: 'pro-image',
      prompt: 'a cat',
      n: 128,
      size: '1536x1024',
      quality: 'high',
      background: 'transparent',
      output_format: 'webp',
      moderation: 'low',
      user: 'u'.repeat(256),
    },
    expected: {
      family: 'pro-image',
      action: 'generate',
      units: 128,
      upstream: {
        model: 'pro-image',
        prompt: 'a cat',
        n: 128,
        size: '1536x1024',
        quality: 'high',
        background: 'transparent',
        output_format: 'webp',
        moderation: 'low',
        user: 'u'.repeat(256),
      },
    },
  },
  {
    name: 'pro-image size auto, null fields count as omitted',
    body: { model: 'pro-image', prompt: 'x', size: 'auto', quality: null, image: null },
    expected: { family: 'pro-image', action: 'generate', units: 1, upstream: { model: 'pro-image', prompt: 'x', n: 1, size: 'auto' } },
  },
  {
    name: 'pro-image image-to-image with images (URL and data URI); recorded shortens Base64',
    body: { model: 'pro-image', prompt: 'edit', images: [URL_A, DATA_PNG], n: 2 },
    expected: {
      family: 'pro-image',
      action: 'edit',
      units: 2,
      upstream: { model: 'pro-image', prompt: 'edit', images: [URL_A, DATA_PNG], n: 2 },
      recorded: { model: 'pro-image', prompt: 'edit', images: [URL_A, DATA_PNG_PLACEHOLDER], n: 2 },
    },
  },
  {
    name: 'pro-image image-to-image with a single image data URI',
    body: { model: 'pro-image', prompt: 'edit', image: DATA_BIG_JPEG },
    expected: {
      family: 'pro-image',
      action: 'edit',
      units: 1,
      upstream: { model: 'pro-image', prompt: 'edit', image: DATA_BIG_JPEG, n: 1 },
      recorded: { model: 'pro-image', prompt: 'edit', image: 'data:image/jpeg;base64,…(12345 bytes)', n: 1 },
    },
  },
  {
    name: 'pro-image with 16 images',
    body: { model: 'pro-image', prompt: 'edit', images: Array.from({ length: 16 }, (_, i) => `${URL_A}?i=${i}`) },
    expected: {
      family: 'pro-image',
      action: 'edit',
      units: 1,
      upstream: { model: 'pro-image', prompt: 'edit', images: Array.from({ length: 16 }, (_, i) => `${URL_A}?i=${i}`), n: 1 },
    },
  },

  // ---- anime ----
  ...animeModels.map((model): Accept => ({
    name: `${model} text-to-image with defaults`,
    body: { model, prompt: 'a fox', extra: 1 },
    expected: { family: 'anime', action: 'generate', units: 1, upstream: { model, prompt: 'a fox', n: 1, size: '1024x1024' } },
  })),
  ...animeModels.map((model): Accept => ({
    name: `${model} image-to-image with a data URI, n and size`,
    body: { model, prompt: 'keep the face', image: DATA_PNG, n: 4, size: '832x1216' },
    expected: {
      family: 'anime',
      action: 'edit',
      units: 4,
      upstream: { model, prompt: 'keep the face', image: DATA_PNG, n: 4, size: '832x1216' },
      recorded: { model, prompt: 'keep the face', image: DATA_PNG_PLACEHOLDER, n: 4, size: '832x1216' },
    },
  })),
  {
    name: 'anime with a URL reference and edge sizes',
    body: { model: 'anime-diffusion-4-5-full', prompt: 'p', image: URL_B, size: '64x4096' },
    expected: {
      family: 'anime',
      action: 'edit',
      units: 1,
      upstream: { model: 'anime-diffusion-4-5-full', prompt: 'p', image: URL_B, n: 1, size: '64x4096' },
    },
  },

  // ---- vis generation ----
  ...visGenerationModels.map((model): Accept => ({
    name: `${model} generation with defaults`,
    body: { model, prompt: 'a city' },
    expected: { family: 'vis', action: 'generate', units: 1, upstream: { model, prompt: 'a city', n: 1, size: '1:1' } },
  })),
  {
    name: 'vis-imagine-1.0 maps 1792x1024 to 16:9',
    body: { model: 'vis-imagine-1.0', prompt: 'p', size: '1792x1024', n: 4 },
    expected: { family: 'vis', action: 'generate', units: 4, upstream: { model: 'vis-imagine-1.0', prompt: 'p', n: 4, size: '16:9' } },
  },
  {
    name: 'vis-imagine-2.0 maps 1024x768 to the nearest basic ratio 3:2',
    body: { model: 'vis-imagine-2.0', prompt: 'p', size: '1024x768' },
    expected: { family: 'vis', action: 'generate', units: 1, upstream: { model: 'vis-imagine-2.0', prompt: 'p', n: 1, size: '3:2' } },
  },
  {
    name: 'vis-imagine-image maps 1024x768 to 4:3 (extended ratios)',
    body: { model: 'vis-imagine-image', prompt: 'p', size: '1024x768' },
    expected: { family: 'vis', action: 'generate', units: 1, upstream: { model: 'vis-imagine-image', prompt: 'p', n: 1, size: '4:3' } },
  },
  {
    name: 'vis-imagine-image-quality takes auto and ignores quality',
    body: { model: 'vis-imagine-image-quality', prompt: 'p', size: 'auto', quality: 'low' },
    expected: { family: 'vis', action: 'generate', units: 1, upstream: { model: 'vis-imagine-image-quality', prompt: 'p', n: 1, size: 'auto' } },
  },
  {
    name: 'vis-imagine-image-2.0 forwards quality and an extended ratio',
    body: { model: 'vis-imagine-image-2.0', prompt: 'p', size: '21:9', quality: 'medium', n: 2 },
    expected: {
      family: 'vis',
      action: 'generate',
      units: 2,
      upstream: { model: 'vis-imagine-image-2.0', prompt: 'p', n: 2, size: '21:9', quality: 'medium' },
    },
  },
  {
    name: 'vis-imagine-1.0 ignores quality',
    body: { model: 'vis-imagine-1.0', prompt: 'p', quality: 'medium', size: '2:3' },
    expected: { family: 'vis', action: 'generate', units: 1, upstream: { model: 'vis-imagine-1.0', prompt: 'p', n: 1, size: '2:3' } },
  },

  // ---- vis edit ----
  ...visEditModels.map((model): Accept => ({
    name: `${model} edit with one image`,
    body: { model, prompt: 'make it blue', image: URL_A },
    expected: { family: 'vis', action: 'edit', units: 1, upstream: { model, prompt: 'make it blue', images: [URL_A], size: '1:1' } },
  })),
  {
    name: 'vis edit merges image first, dedupes, n 1 accepted but not forwarded',
    body: { model: 'vis-imagine-1.0-edit', prompt: 'p', image: URL_B, images: [URL_A, URL_B, URL_A, URL_C, URL_D], n: 1, size: '1024x1536' },
    expected: {
      family: 'vis',
      action: 'edit',
      units: 1,
      upstream: { model: 'vis-imagine-1.0-edit', prompt: 'p', images: [URL_B, URL_A, URL_C, URL_D], size: '2:3' },
    },
  },
  {
    name: 'vis edit with 5 images and quality on vis-imagine-image-2.0',
    body: { model: 'vis-imagine-image-2.0', prompt: 'p', images: [URL_A, URL_B, URL_C, URL_D, URL_E], quality: 'low', size: 'auto' },
    expected: {
      family: 'vis',
      action: 'edit',
      units: 1,
      upstream: { model: 'vis-imagine-image-2.0', prompt: 'p', images: [URL_A, URL_B, URL_C, URL_D, URL_E], size: 'auto', quality: 'low' },
    },
  },
  {
    name: 'vis edit on vis-imagine-2.0-edit ignores quality',
    body: { model: 'vis-imagine-2.0-edit', prompt: 'p', images: [URL_A], quality: 'low', size: '9:16' },
    expected: { family: 'vis', action: 'edit', units: 1, upstream: { model: 'vis-imagine-2.0-edit', prompt: 'p', images: [URL_A], size: '9:16' } },
  },

  // ---- picgen async ----
  ...picgenAsyncModels.map((model): Accept => ({
    name: `${model} text-to-image`,
    body: { model, prompt: 'a bridge', response_format: 'b64_json' },
    expected: { family: 'picgen', action: 'generate', units: 1, upstream: { model, prompt: 'a bridge' } },
  })),
  ...picgenAsyncModels.map((model): Accept => ({
    name: `${model} with image, size passed through and metadata merged`,
    body: { model, prompt: 'p', image: URL_A, size: '2K', metadata: { watermark: false, seed: 7, quality: 'hd' } },
    expected: {
      family: 'picgen',
      action: 'edit',
      units: 1,
      upstream: { watermark: false, seed: 7, quality: 'hd', model, prompt: 'p', image: URL_A, size: '2K' },
    },
  })),
  {
    name: 'picgen images take priority over image',
    body: { model: 'picgen-4-0-250828', prompt: 'p', image: URL_A, images: [URL_B, URL_C], size: '2048×2048' },
    expected: {
      family: 'picgen',
      action: 'edit',
      units: 1,
      upstream: { model: 'picgen-4-0-250828', prompt: 'p', images: [URL_B, URL_C], size: '2048×2048' },
    },
  },
  {
    name: 'picgen with 14 images; data URIs inside metadata are shortened in recorded',
    body: {
      model: 'vendor-picgen-4-0-250828',
      prompt: 'p',
      images: Array.from({ length: 14 }, (_, i) => `${URL_A}?i=${i}`),
      metadata: { mask_hint: DATA_PNG },
    },
    expected: {
      family: 'picgen',
      action: 'edit',
      units: 1,
      upstream: {
        mask_hint: DATA_PNG,
        model: 'vendor-picgen-4-0-250828',
        prompt: 'p',
        images: Array.from({ length: 14 }, (_, i) => `${URL_A}?i=${i}`),
      },
      recorded: {
        mask_hint: DATA_PNG_PLACEHOLDER,
        model: 'vendor-picgen-4-0-250828',
        prompt: 'p',
        images: Array.from({ length: 14 }, (_, i) => `${URL_A}?i=${i}`),
      },
    },
  },
];

describe('planAsyncImageRequest: accepted requests', () => {
  it.each(accepts)('$name', ({ body, expected }) => {
    const plan = accepted(body);
    expect(plan.family).toBe(expected.family);
    expect(plan.action).toBe(expected.action);
    expect(plan.units).toBe(expected.units);
    expect(plan.model).toBe(body.model);
    expect(plan.upstream).toStrictEqual(expected.upstream);
    expect(plan.recorded).toStrictEqual(expected.recorded ?? expected.upstream);
  });

  it('covers every model of the async families', () => {
    const covered = new Set(accepts.map((a) => a.body.model));
    for (const model of ['pro-image', ...animeModels, ...visGenerationModels, ...visEditModels, ...picgenAsyncModels]) {
      expect(covered.has(model)).toBe(true);
    }
  });

  it('keeps the upstream Base64 intact and the recorded copy small', () => {
    const plan = accepted({ model: 'pro-image', prompt: 'p', image: DATA_BIG_JPEG });
    expect(plan.upstream.image).toBe(DATA_BIG_JPEG);
    expect(JSON.stringify(plan.recorded).length).toBeLessThan(200);
  });

  it('does not alias the body: the recorded copy is separate from upstream', () => {
    const plan = accepted({ model: 'pro-image', prompt: 'p', images: [DATA_PNG] });
    expect(plan.recorded.images).not.toBe(plan.upstream.images);
  });
});

type Refuse = { name: string; body: unknown; param: string };

const BAD_REFS = [
  'ftp://example.com/a.png',
  'https://',
  'example.com/a.png',
  'http://exa mple.com/a.png',
  'data:image/PNG;base64,AAAA',
  'data:image/png;base64,',
  'data:text/plain;base64,AAAA',
  'data:image/png;base64,A',
];

const refusals: Refuse[] = [
  // ---- body and model ----
  { name: 'a non-object body', body: ['model'], param: 'body' },
  { name: 'a null body', body: null, param: 'body' },
  { name: 'a string body', body: 'pro-image', param: 'body' },
  { name: 'a missing model', body: { prompt: 'p' }, param: 'model' },
  { name: 'a non-string model', body: { model: 7, prompt: 'p' }, param: 'model' },
  { name: 'an unknown model', body: { model: 'std-image', prompt: 'p' }, param: 'model' },
  { name: 'a sync-only picgen model', body: { model: 'vendor-picgen-5-0-pro-260628', prompt: 'p' }, param: 'model' },
  { name: 'a prototype-named model', body: { model: 'constructor', prompt: 'p' }, param: 'model' },

  // ---- prompt, every family ----
  ...['pro-image', animeModels[0], visGenerationModels[0], picgenAsyncModels[0]].flatMap((model): Refuse[] => [
    { name: `${model}: missing prompt`, body: { model }, param: 'prompt' },
    { name: `${model}: blank prompt`, body: { model, prompt: '  \n ' }, param: 'prompt' },
    { name: `${model}: non-string prompt`, body: { model, prompt: ['a'] }, param: 'prompt' },
  ]),

  // ---- pro-image ----
  { name: 'pro-image: image and images together', body: { model: 'pro-image', prompt: 'p', image: URL_A, images: [URL_B] }, param: 'image' },
  { name: 'pro-image: empty images', body: { model: 'pro-image', prompt: 'p', images: [] }, param: 'images' },
  { name: 'pro-image: 17 images', body: { model: 'pro-image', prompt: 'p', images: Array.from({ length: 17 }, () => URL_A) }, param: 'images' },
  { name: 'pro-image: images not an array', body: { model: 'pro-image', prompt: 'p', images: URL_A }, param: 'images' },
  { name: 'pro-image: image as an array', body: { model: 'pro-image', prompt: 'p', image: [URL_A] }, param: 'image' },
  ...BAD_REFS.map((ref): Refuse => ({ name: `pro-image: bad image ${ref}`, body: { model: 'pro-image', prompt: 'p', image: ref }, param: 'image' })),
  ...BAD_REFS.map((ref): Refuse => ({
    name: `pro-image: bad images item ${ref}`,
    body: { model: 'pro-image', prompt: 'p', images: [URL_A, ref] },
    param: 'images',
  })),
  { name: 'pro-image: n 0', body: { model: 'pro-image', prompt: 'p', n: 0 }, param: 'n' },
  { name: 'pro-image: n 129', body: { model: 'pro-image', prompt: 'p', n: 129 }, param: 'n' },
  { name: 'pro-image: n 1.5', body: { model: 'pro-image', prompt: 'p', n: 1.5 }, param: 'n' },
  { name: 'pro-image: n "2"', body: { model: 'pro-image', prompt: 'p', n: '2' }, param: 'n' },
  { name: 'pro-image: n true', body: { model: 'pro-image', prompt: 'p', n: true }, param: 'n' },
  { name: 'pro-image: size 16:9', body: { model: 'pro-image', prompt: 'p', size: '16:9' }, param: 'size' },
  { name: 'pro-image: size 0x1024', body: { model: 'pro-image', prompt: 'p', size: '0x1024' }, param: 'size' },
  { name: 'pro-image: size 1024*1024', body: { model: 'pro-image', prompt: 'p', size: '1024*1024' }, param: 'size' },
  { name: 'pro-image: size AUTO', body: { model: 'pro-image', prompt: 'p', size: 'AUTO' }, param: 'size' },
  { name: 'pro-image: size number', body: { model: 'pro-image', prompt: 'p', size: 1024 }, param: 'size' },
  { name: 'pro-image: quality ultra', body: { model: 'pro-image', prompt: 'p', quality: 'ultra' }, param: 'quality' },
  { name: 'pro-image: quality boolean', body: { model: 'pro-image', prompt: 'p', quality: true }, param: 'quality' },
  { name: 'pro-image: background white', body: { model: 'pro-image', prompt: 'p', background: 'white' }, param: 'background' },
  { name: 'pro-image: output_format gif', body: { model: 'pro-image', prompt: 'p', output_format: 'gif' }, param: 'output_format' },
  { name: 'pro-image: moderation none', body: { model: 'pro-image', prompt: 'p', moderation: 'none' }, param: 'moderation' },
  { name: 'pro-image: user too long', body: { model: 'pro-image', prompt: 'p', user: 'u'.repeat(257) }, param: 'user' },
  { name: 'pro-image: user number', body: { model: 'pro-image', prompt: 'p', user: 42 }, param: 'user' },

  // ---- anime ----
  { name: 'anime: images', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', images: [URL_A] }, param: 'images' },
  { name: 'anime: image array of one', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', image: [URL_A] }, param: 'image' },
  { name: 'anime: image array of two', body: { model: 'anime-diffusion-4-5-curated', prompt: 'p', image: [URL_A, URL_B] }, param: 'image' },
  ...BAD_REFS.map((ref): Refuse => ({ name: `anime: bad image ${ref}`, body: { model: 'anime-diffusion-4-5-full', prompt: 'p', image: ref }, param: 'image' })),
  { name: 'anime: n 5', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', n: 5 }, param: 'n' },
  { name: 'anime: n 0', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', n: 0 }, param: 'n' },
  { name: 'anime: n "2"', body: { model: 'anime-diffusion-4-5-curated', prompt: 'p', n: '2' }, param: 'n' },
  { name: 'anime: size 63x1024', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', size: '63x1024' }, param: 'size' },
  { name: 'anime: size 1024x4097', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', size: '1024x4097' }, param: 'size' },
  { name: 'anime: size ratio', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', size: '1:1' }, param: 'size' },
  { name: 'anime: size auto', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', size: 'auto' }, param: 'size' },
  { name: 'anime: size boolean', body: { model: 'anime-diffusion-4-5-full', prompt: 'p', size: false }, param: 'size' },

  // ---- vis generation ----
  { name: 'vis: 1.0-edit without an image', body: { model: 'vis-imagine-1.0-edit', prompt: 'p' }, param: 'image' },
  { name: 'vis: 2.0-edit without an image', body: { model: 'vis-imagine-2.0-edit', prompt: 'p' }, param: 'image' },
  { name: 'vis: n 5', body: { model: 'vis-imagine-image', prompt: 'p', n: 5 }, param: 'n' },
  { name: 'vis: n 0', body: { model: 'vis-imagine-1.0', prompt: 'p', n: 0 }, param: 'n' },
  { name: 'vis: n "2"', body: { model: 'vis-imagine-2.0', prompt: 'p', n: '2' }, param: 'n' },
  { name: 'vis: auto on vis-imagine-1.0', body: { model: 'vis-imagine-1.0', prompt: 'p', size: 'auto' }, param: 'size' },
  { name: 'vis: auto on vis-imagine-2.0', body: { model: 'vis-imagine-2.0', prompt: 'p', size: 'auto' }, param: 'size' },
  { name: 'vis: extended ratio on a basic model', body: { model: 'vis-imagine-2.0', prompt: 'p', size: '4:3' }, param: 'size' },
  { name: 'vis: unknown ratio', body: { model: 'vis-imagine-image', prompt: 'p', size: '5:4' }, param: 'size' },
  { name: 'vis: garbage size', body: { model: 'vis-imagine-image', prompt: 'p', size: 'big' }, param: 'size' },
  { name: 'vis: size number', body: { model: 'vis-imagine-image', prompt: 'p', size: 1 }, param: 'size' },
  ...visGenerationModels.map((model): Refuse => ({ name: `vis: quality high on ${model}`, body: { model, prompt: 'p', quality: 'high' }, param: 'quality' })),
  { name: 'vis: quality boolean', body: { model: 'vis-imagine-image-2.0', prompt: 'p', quality: true }, param: 'quality' },

  // ---- vis edit ----
  { name: 'vis: vis-imagine-1.0 with an image', body: { model: 'vis-imagine-1.0', prompt: 'p', image: URL_A }, param: 'model' },
  { name: 'vis: vis-imagine-2.0 with images', body: { model: 'vis-imagine-2.0', prompt: 'p', images: [URL_A] }, param: 'model' },
  { name: 'vis edit: data URI image', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', image: DATA_PNG }, param: 'image' },
  { name: 'vis edit: data URI in images', body: { model: 'vis-imagine-image', prompt: 'p', images: [URL_A, DATA_PNG] }, param: 'images' },
  ...BAD_REFS.map((ref): Refuse => ({ name: `vis edit: bad image ${ref}`, body: { model: 'vis-imagine-2.0-edit', prompt: 'p', image: ref }, param: 'image' })),
  { name: 'vis edit: empty images', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', images: [] }, param: 'images' },
  { name: 'vis edit: images not an array', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', images: URL_A }, param: 'images' },
  { name: 'vis edit: image as an array', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', image: [URL_A] }, param: 'image' },
  {
    name: 'vis edit: 6 distinct images',
    body: { model: 'vis-imagine-image', prompt: 'p', images: [URL_A, URL_B, URL_C, URL_D, URL_E, URL_F] },
    param: 'images',
  },
  {
    name: 'vis edit: image plus 5 other images',
    body: { model: 'vis-imagine-image', prompt: 'p', image: URL_F, images: [URL_A, URL_B, URL_C, URL_D, URL_E] },
    param: 'images',
  },
  { name: 'vis edit: n 2', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', image: URL_A, n: 2 }, param: 'n' },
  { name: 'vis edit: n "1"', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', image: URL_A, n: '1' }, param: 'n' },
  { name: 'vis edit: auto on a basic edit model', body: { model: 'vis-imagine-1.0-edit', prompt: 'p', image: URL_A, size: 'auto' }, param: 'size' },
  { name: 'vis edit: quality high', body: { model: 'vis-imagine-image-2.0', prompt: 'p', image: URL_A, quality: 'high' }, param: 'quality' },

  // ---- picgen async ----
  { name: 'picgen: quality', body: { model: 'vendor-picgen-4-0-250828', prompt: 'p', quality: 'hd' }, param: 'quality' },
  { name: 'picgen: n even 1', body: { model: 'vendor-picgen-4-0-250828', prompt: 'p', n: 1 }, param: 'n' },
  {
    name: 'picgen: sequential_image_generation',
    body: { model: 'picgen-4-0-250828', prompt: 'p', sequential_image_generation: 'auto' },
    param: 'sequential_image_generation',
  },
  {
    name: 'picgen: sequential_image_generation_options',
    body: { model: 'picgen-4-0-250828', prompt: 'p', sequential_image_generation_options: { max_images: 3 } },
    param: 'sequential_image_generation_options',
  },
  { name: 'picgen: layer_decomposition', body: { model: 'picgen-4-0-250828', prompt: 'p', layer_decomposition: true }, param: 'layer_decomposition' },
  { name: 'picgen: data URI image', body: { model: 'picgen-4-0-250828', prompt: 'p', image: DATA_PNG }, param: 'image' },
  { name: 'picgen: image array', body: { model: 'picgen-4-0-250828', prompt: 'p', image: [URL_A] }, param: 'image' },
  ...BAD_REFS.map((ref): Refuse => ({
    name: `picgen: bad images item ${ref}`,
    body: { model: 'picgen-4-0-250828', prompt: 'p', images: [ref] },
    param: 'images',
  })),
  { name: 'picgen: invalid image even when images wins', body: { model: 'picgen-4-0-250828', prompt: 'p', image: 'nope', images: [URL_A] }, param: 'image' },
  { name: 'picgen: empty images', body: { model: 'picgen-4-0-250828', prompt: 'p', images: [] }, param: 'images' },
  { name: 'picgen: 15 images', body: { model: 'picgen-4-0-250828', prompt: 'p', images: Array.from({ length: 15 }, () => URL_A) }, param: 'images' },
  { name: 'picgen: empty size', body: { model: 'picgen-4-0-250828', prompt: 'p', size: '' }, param: 'size' },
  { name: 'picgen: size of 33 characters', body: { model: 'picgen-4-0-250828', prompt: 'p', size: 'x'.repeat(33) }, param: 'size' },
  { name: 'picgen: size number', body: { model: 'picgen-4-0-250828', prompt: 'p', size: 2048 }, param: 'size' },
  { name: 'picgen: metadata array', body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: [1] }, param: 'metadata' },
  { name: 'picgen: metadata string', body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: 'x' }, param: 'metadata' },
  {
    name: 'picgen: metadata.model',
    body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: { model: 'vendor-picgen-5-0-pro-260628' } },
    param: 'metadata.model',
  },
  { name: 'picgen: metadata.model null', body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: { model: null } }, param: 'metadata.model' },
  { name: 'picgen: metadata.images', body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: { images: ['http://10.0.0.1/x'] } }, param: 'metadata.images' },
  { name: 'picgen: metadata.n', body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: { n: 4 } }, param: 'metadata.n' },
  {
    name: 'picgen: metadata.sequential_image_generation',
    body: { model: 'picgen-4-0-250828', prompt: 'p', metadata: { sequential_image_generation: 'auto' } },
    param: 'metadata.sequential_image_generation',
  },
];

describe('planAsyncImageRequest: refusals', () => {
  it.each(refusals)('$name → $param', ({ body, param }) => {
    const result = planAsyncImageRequest(body);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.param).toBe(param);
    expect(result.message.startsWith(`${param}: `)).toBe(true);
    expect(result.message.length).toBeGreaterThan(param.length + 2);
  });

  it('words the messages as the brief shows', () => {
    const message = (body: unknown): string => {
      const result = planAsyncImageRequest(body);
      return result.ok ? '' : result.message;
    };
    expect(message({ model: 'anime-diffusion-4-5-full', prompt: 'p', n: 9 })).toBe('n: must be an integer from 1 to 4');
    expect(message({ model: 'std-image', prompt: 'p' })).toContain('not an async image model');
    expect(message({ model: 'vis-imagine-1.0', prompt: 'p', image: URL_A })).toContain('use vis-imagine-1.0-edit');
    expect(message({ model: 'picgen-4-0-250828', prompt: 'p', quality: 'x' })).toBe('quality: not accepted by the picgen async route');
    expect(message({ model: 'x'.repeat(500), prompt: 'p' }).length).toBeLessThan(250);
  });

  it('checks the model before the prompt', () => {
    const result = planAsyncImageRequest({ model: 'nope' });
    expect(result.ok ? '' : result.param).toBe('model');
  });
});

describe('building blocks', () => {
  it('maps the family of each model', () => {
    expect(asyncImageFamilyOf('pro-image')).toBe('pro-image');
    expect(asyncImageFamilyOf('vis-imagine-1.0-edit')).toBe('vis');
    expect(asyncImageFamilyOf('picgen-4-0-250828')).toBe('picgen');
    expect(asyncImageFamilyOf('anime-diffusion-4-5-curated')).toBe('anime');
    expect(asyncImageFamilyOf('std-image')).toBeUndefined();
  });

  it.each([
    [1792, 1024, ['1:1', '16:9', '9:16', '3:2', '2:3'], '16:9'],
    [1024, 1792, ['1:1', '16:9', '9:16', '3:2', '2:3'], '9:16'],
    [1024, 1024, ['1:1', '16:9'], '1:1'],
    [2560, 1080, ['1:1', '16:9', '21:9', '2:1'], '21:9'],
    [4000, 1000, ['1:1', '16:9', '9:16', '3:2', '2:3', '4:3', '3:4', '21:9', '9:21', '2:1', '1:2'], '21:9'],
    [1000, 4000, ['1:1', '16:9', '9:16', '3:2', '2:3', '4:3', '3:4', '21:9', '9:21', '2:1', '1:2'], '9:21'],
  ])('nearest ratio of %ix%i', (w, h, ratios, expected) => {
    expect(nearestRatio(w, h, ratios)).toBe(expected);
  });

  it('checks URLs syntactically', () => {
    expect(isHttpUrl('https://a.example/x')).toBe(true);
    expect(isHttpUrl('HTTP://a.example')).toBe(true);
    expect(isHttpUrl('http://127.0.0.1:8080/x')).toBe(true);
    expect(isHttpUrl('http:a.example')).toBe(false);
    expect(isHttpUrl('http://a.exa\nmple')).toBe(false);
    expect(isHttpUrl(' http://a.example')).toBe(false);
    expect(isHttpUrl('file:///etc/passwd')).toBe(false);
    expect(isHttpUrl('javascript:alert(1)')).toBe(false);
  });

  it('checks image data URIs', () => {
    expect(isImageDataUri(DATA_PNG)).toBe(true);
    expect(isImageDataUri('data:image/svg+xml;base64,PHN2Zz4=')).toBe(true);
    expect(isImageDataUri('data:image/png;base64,YQ')).toBe(true);
    expect(isImageDataUri('data:image/png;base64,YQ=')).toBe(false);
    expect(isImageDataUri('data:image/png;base64,YQ==')).toBe(true);
    expect(isImageDataUri('data:image/png;base64,Y Q==')).toBe(false);
    expect(isImageDataUri('data:image/Png;base64,YQ==')).toBe(false);
  });

  it('counts decoded bytes in the placeholder', () => {
    expect(placeholderFor('data:image/png;base64,YQ==')).toBe('data:image/png;base64,…(1 bytes)');
    expect(placeholderFor('data:image/png;base64,YWI=')).toBe('data:image/png;base64,…(2 bytes)');
    expect(placeholderFor('data:image/png;base64,YWJj')).toBe('data:image/png;base64,…(3 bytes)');
    expect(placeholderFor(DATA_BIG_JPEG)).toBe('data:image/jpeg;base64,…(12345 bytes)');
    expect(placeholderFor(URL_A)).toBe(URL_A);
    expect(placeholderFor('data:text/plain,hello')).toBe('data:text/plain,hello');
  });
});
