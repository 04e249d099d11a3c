import { describe, expect, it } from 'vitest';
import { UploadedFile } from '../../../src/families/vid-h3/multipart.js';
import { decodeForm } from '../../support/multipart-bytes.js';
import { planVidH3Request } from '../../../src/families/vid-h3/request.js';
import { type VideoPlan } from '../../../src/families/kit/video.js';

const FIRST = 'https://media.example.com/first.png';
const LAST = 'https://media.example.com/last.png';
const ref = (type: string) => ({ type, url: 'https://media.example.com/r' });

function accepted(body: unknown): VideoPlan {
  const result = planVidH3Request(body);
  if (!result.ok) throw new Error(`expected acceptance, got ${result.message}`);
  return result.plan;
}

describe('Vid-H3 request rules: the four modes and their upstream bodies', () => {
  const cases: [string, Record<string, unknown>, Partial<VideoPlan>][] = [
    [
      'text only: 5 s at 768P, ratio 16:9',
      { model: 'Vid-H3', prompt: 'a fox' },
      { action: 'text', units: 5, tier: '768P', upstream: { model: 'Vid-H3', seconds: 5, size: '768P', prompt: 'a fox', metadata: { ratio: '16:9' } } },
    ],
    [
      'text from a lone content text item',
      { model: 'Vid-H3', seconds: '15', resolution: '2k', metadata: { content: [{ type: 'text', text: 'from content' }] } },
      { action: 'text', units: 15, tier: '2K', upstream: { model: 'Vid-H3', seconds: 15, size: '2K', prompt: 'from content', metadata: { ratio: '16:9' } } },
    ],
    [
      'first frame from the openai {image_url} object: ratio adaptive',
      { model: 'Vid-H3', prompt: 'go', input_reference: { image_url: FIRST }, metadata: { resolution: '768p', aigc_watermark: 'false' } },
      {
        action: 'first-frame',
        upstream: { model: 'Vid-H3', seconds: 5, size: '768P', prompt: 'go', metadata: { ratio: 'adaptive', first_frame_image: FIRST, aigc_watermark: false } },
      },
    ],
    [
      'the same first frame in two fields is fine',
      { model: 'Vid-H3', prompt: 'go', image: FIRST, images: [FIRST, LAST] },
      {
        action: 'first-last-frame',
        upstream: {
          model: 'Vid-H3',
          seconds: 5,
          size: '768P',
          prompt: 'go',
          metadata: { ratio: 'adaptive', first_frame_image: FIRST, last_frame_image: LAST },
        },
      },
    ],
    [
      'multi-reference: prompt appended as the text item',
      {
        model: 'Vid-H3',
        prompt: 'mix',
        size: '2K',
        metadata: { ratio: '9:16', content: [ref('reference_image'), ref('reference_video')], callback_url: 'https://h.example.com/' },
      },
      {
        action: 'multi-reference',
        tier: '2K',
        callbackUrl: 'https://h.example.com/',
        upstream: {
          model: 'Vid-H3',
          seconds: 5,
          size: '2K',
          metadata: { ratio: '9:16', content: [ref('reference_image'), ref('reference_video'), { type: 'text', text: 'mix' }] },
        },
      },
    ],
    [
      "audio references with the text alone (the audio-only rule is vidgen's)",
      { model: 'Vid-H3', prompt: 'sing', metadata: { content: [ref('reference_audio'), ref('reference_audio')] } },
      {
        action: 'multi-reference',
        upstream: {
          model: 'Vid-H3',
          seconds: 5,
          size: '768P',
          metadata: { ratio: 'adaptive', content: [ref('reference_audio'), ref('reference_audio'), { type: 'text', text: 'sing' }] },
        },
      },
    ],
    [
      'an empty images array gives no frame',
      { model: 'Vid-H3', prompt: 'x', images: [] },
      { action: 'text', upstream: { model: 'Vid-H3', seconds: 5, size: '768P', prompt: 'x', metadata: { ratio: '16:9' } } },
    ],
  ];

  it.each(cases)('%s', (_name, body, expected) => {
    expect(accepted(body)).toMatchObject(expected);
  });
});

describe('Vid-H3 request rules: refusals', () => {
  const refused: [string, unknown, string][] = [
    ['model missing', { prompt: 'x' }, 'model'],
    ['prompt not a string', { model: 'Vid-H3', prompt: 5 }, 'prompt'],
    ['no text', { model: 'Vid-H3', image: FIRST }, 'prompt'],
    ['seconds 4.5', { model: 'Vid-H3', prompt: 'x', seconds: 4.5 }, 'seconds'],
    ['size 1280x720', { model: 'Vid-H3', prompt: 'x', size: '1280x720' }, 'size'],
    ['metadata resolution 720x1280', { model: 'Vid-H3', prompt: 'x', metadata: { resolution: '720x1280' } }, 'metadata.resolution'],
    ['size and metadata disagree', { model: 'Vid-H3', prompt: 'x', size: '2K', metadata: { resolution: '768P' } }, 'metadata.resolution'],
    ['input_reference upload', { model: 'Vid-H3', prompt: 'x', input_reference: new UploadedFile('a.png', 'image/png', 3) }, 'input_reference'],
    ['input_reference object without URL', { model: 'Vid-H3', prompt: 'x', input_reference: { file_id: 'f' } }, 'input_reference.image_url'],
    ['images not an array', { model: 'Vid-H3', prompt: 'x', images: FIRST }, 'images'],
    ['4 reference audio', { model: 'Vid-H3', prompt: 'x', metadata: { content: Array.from({ length: 4 }, () => ref('reference_audio')) } }, 'metadata.content'],
    ['images item not a URL', { model: 'Vid-H3', prompt: 'x', images: [FIRST, 'x'] }, 'images.1'],
    ['two last frames', { model: 'Vid-H3', prompt: 'x', images: [FIRST, LAST], metadata: { last_frame_image: FIRST } }, 'images'],
    [
      'two text items',
      {
        model: 'Vid-H3',
        metadata: {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      },
      'metadata.content',
    ],
    ['empty text item', { model: 'Vid-H3', metadata: { content: [{ type: 'text', text: '' }] } }, 'metadata.content.0.text'],
    [
      'metadata frame mixed with references',
      { model: 'Vid-H3', prompt: 'x', metadata: { first_frame_image: FIRST, content: [ref('reference_video')] } },
      'metadata.content',
    ],
  ];

  it.each(refused)('%s → %s', (_name, body, param) => {
    const result = planVidH3Request(body);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.param).toBe(param);
  });
});

describe('Vid-H3 multipart forms decode to the JSON shape', () => {
  async function decode(form: FormData) {
    const request = new Request('http://x', { method: 'POST', body: form });
    return decodeForm(Buffer.from(await request.arrayBuffer()), request.headers.get('content-type')!);
  }

  it('nested objects, arrays and indexed arrays, as the openai client writes them', async () => {
    const form = new FormData();
    form.append('model', 'Vid-H3');
    form.append('seconds', '8');
    form.append('input_reference[image_url]', FIRST);
    form.append('images[]', FIRST);
    form.append('images[]', LAST);
    form.append('metadata[content][0][type]', 'reference_image');
    form.append('metadata[content][0][url]', FIRST);
    form.append('__proto__[polluted]', 'yes');
    form.append('file', new Blob([Buffer.from('abc')], { type: 'image/png' }), 'a.png');
    const body = await decode(form);
    expect(body).toMatchObject({
      model: 'Vid-H3',
      seconds: '8',
      input_reference: { image_url: FIRST },
      images: [FIRST, LAST],
      metadata: { content: [{ type: 'reference_image', url: FIRST }] },
    });
    expect(body.file).toEqual(new UploadedFile('a.png', 'image/png', 3));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const { metadata: _references, file: _file, ...frames } = body;
    expect(accepted({ ...frames, prompt: 'p' }).upstream).toMatchObject({ seconds: 8, metadata: { first_frame_image: FIRST, last_frame_image: LAST } });
  });
});
