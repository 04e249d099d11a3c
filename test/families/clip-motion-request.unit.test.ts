import { describe, expect, it } from 'vitest';
import { planClipRequest, type ClipAction } from '../../src/families/clip/request.js';
import { planMotionRequest, type MotionPath } from '../../src/families/motion/request.js';
import { tierOfPixels } from '../../src/families/motion/sizes.js';
import { type VideoPlan, type VideoPlanResult } from '../../src/families/kit/video.js';

const IMAGE = 'https://media.example.com/frame.png';
const LAST = 'https://media.example.com/last.png';

function accepted(result: VideoPlanResult): VideoPlan {
  if (!result.ok) throw new Error(`expected acceptance, got ${result.message}`);
  return result.plan;
}

describe('clip request rules', () => {
  const cases: [string, ClipAction, Record<string, unknown>, Partial<VideoPlan>][] = [
    [
      'text2video with every default sent upstream',
      'text2video',
      { model_name: 'clip-v1', prompt: 'p', external_task_id: 'ignored' },
      {
        action: 'text2video',
        model: 'clip-v1',
        units: 5,
        tier: 'std',
        upstream: { model_name: 'clip-v1', prompt: 'p', mode: 'std', duration: 5, aspect_ratio: '1:1', cfg_scale: 0.5 },
      },
    ],
    [
      'clip-v2-master defaults to pro',
      'text2video',
      { model: 'clip-v2-master', prompt: 'p' },
      { tier: 'pro', upstream: { model_name: 'clip-v2-master', prompt: 'p', mode: 'pro', duration: 5, aspect_ratio: '1:1', cfg_scale: 0.5 } },
    ],
    [
      'image2video without prompt; frames and metadata forwarded unchanged',
      'image2video',
      { model_name: 'clip-v1-6', image: 'aGVsbG8=', image_tail: IMAGE, duration: 10, cfg_scale: 0, metadata: { k: [1] } },
      {
        units: 10,
        upstream: {
          model_name: 'clip-v1-6',
          image: 'aGVsbG8=',
          image_tail: IMAGE,
          mode: 'std',
          duration: 10,
          aspect_ratio: '1:1',
          cfg_scale: 0,
          metadata: { k: [1] },
        },
      },
    ],
  ];

  it.each(cases)('%s', (_name, action, body, expected) => {
    expect(accepted(planClipRequest(body, action))).toMatchObject(expected);
  });

  const refused: [string, ClipAction, unknown, string][] = [
    ['model_name wins, so a bad one is refused even with a good model', 'text2video', { model_name: 'x', model: 'clip-v1', prompt: 'p' }, 'model_name'],
    ['pro-only model in std', 'image2video', { model_name: 'clip-v2-master', image: IMAGE, mode: 'std' }, 'mode'],
    ['blank prompt on text2video', 'text2video', { model_name: 'clip-v1', prompt: ' ' }, 'prompt'],
    ['image_tail on text2video', 'text2video', { model_name: 'clip-v1', prompt: 'p', image_tail: IMAGE }, 'image_tail'],
    ['empty image', 'image2video', { model_name: 'clip-v1', image: '' }, 'image'],
    ['cfg_scale string', 'text2video', { model_name: 'clip-v1', prompt: 'p', cfg_scale: '0.5' }, 'cfg_scale'],
    ['negative_prompt not a string', 'text2video', { model_name: 'clip-v1', prompt: 'p', negative_prompt: 1 }, 'negative_prompt'],
  ];

  it.each(refused)('%s → %s', (_name, action, body, param) => {
    const result = planClipRequest(body, action);
    expect(result.ok ? undefined : result.param).toBe(param);
  });
});

describe('motion request rules', () => {
  const cases: [string, MotionPath, Record<string, unknown>, Partial<VideoPlan>][] = [
    [
      'text: defaults (5 s, reserved at 1080P, no resolution sent)',
      'text',
      { model: 'motion3.0-video', prompt: 'p' },
      { action: 'text2video', units: 5, tier: '1080P', upstream: { model: 'motion3.0-video', input: { prompt: 'p' }, parameters: { duration: 5 } } },
    ],
    [
      'size as a resolution name is sent as resolution',
      'text',
      { model: 'motion2.5-t2v-preview', prompt: 'p', size: '480p', duration: 10 },
      { units: 10, tier: '480P', upstream: { model: 'motion2.5-t2v-preview', input: { prompt: 'p' }, parameters: { resolution: '480P', duration: 10 } } },
    ],
    [
      'seconds is the compatibility field; duration wins when both are given',
      'text',
      { model: 'motion3.0-video', prompt: 'p', duration: 4, seconds: 9 },
      { units: 4 },
    ],
    [
      'prompt and billing values from metadata when the flat fields are absent',
      'text',
      { model: 'motion3.0-video', metadata: { input: { prompt: 'from input' }, parameters: { resolution: '720P', duration: '8' } } },
      { units: 8, tier: '720P', upstream: { model: 'motion3.0-video', input: { prompt: 'from input' }, parameters: { resolution: '720P', duration: 8 } } },
    ],
    [
      'image: first frame from image_url becomes img_url',
      'image',
      { model: 'motion2.6-i2v', image_url: IMAGE, size: '1920*1080' },
      { action: 'image2video', tier: '1080P', upstream: { model: 'motion2.6-i2v', input: { img_url: IMAGE }, parameters: { size: '1920*1080', duration: 5 } } },
    ],
    [
      'image: first_frame_url and last_frame_url make keyframes',
      'image',
      { model: 'motion2.2-kf2v-flash', first_frame_url: IMAGE, last_frame_url: LAST, prompt: 'p' },
      {
        action: 'keyframes2video',
        upstream: { model: 'motion2.2-kf2v-flash', input: { prompt: 'p', first_frame_url: IMAGE, last_frame_url: LAST }, parameters: { duration: 5 } },
      },
    ],
    ['image: media with images only', 'image', { model: 'motion2.6-i2v', media: [{ type: 'image', url: IMAGE }] }, { action: 'image2video' }],
    // Spec 4.15 sets no count on images or media and does not keep frames from media.
    [
      'image: images beyond two are checked, the first two are the frames',
      'image',
      { model: 'motion2.2-kf2v-flash', images: [IMAGE, LAST, IMAGE, LAST] },
      {
        action: 'keyframes2video',
        upstream: { model: 'motion2.2-kf2v-flash', input: { first_frame_url: IMAGE, last_frame_url: LAST }, parameters: { duration: 5 } },
      },
    ],
    [
      'image: a frame with media, both sent',
      'image',
      { model: 'motion2.6-i2v', image: IMAGE, media: [{ type: 'video', url: LAST }] },
      {
        action: 'reference2video',
        upstream: { model: 'motion2.6-i2v', input: { img_url: IMAGE, media: [{ type: 'video', url: LAST }] }, parameters: { duration: 5 } },
      },
    ],
    ['image: media with audio only', 'image', { model: 'motion2.6-i2v', media: [{ type: 'audio', url: LAST }] }, { action: 'image2video' }],
    [
      'image: 4 media videos',
      'image',
      { model: 'motion2.6-i2v', media: Array.from({ length: 4 }, () => ({ type: 'video', url: IMAGE })) },
      { action: 'reference2video' },
    ],
    [
      'image: empty images and media arrays with a frame elsewhere',
      'image',
      { model: 'motion2.6-i2v', image: IMAGE, images: [], media: [] },
      { action: 'image2video' },
    ],
  ];

  it.each(cases)('%s', (_name, path, body, expected) => {
    expect(accepted(planMotionRequest(body, path))).toMatchObject(expected);
  });

  it('pixel sizes map to the smallest tier that holds them', () => {
    expect(
      [
        [832, 480],
        [624, 624],
        [1280, 720],
        [960, 960],
        [1088, 832],
        [1920, 1080],
        [1440, 1440],
        [2560, 1440],
      ].map(([w, h]) => tierOfPixels(w!, h!)),
    ).toEqual(['480P', '480P', '720P', '720P', '720P', '1080P', '1080P', undefined]);
  });

  const refused: [string, MotionPath, unknown, string][] = [
    [
      'metadata.parameters resolution unknown',
      'text',
      { model: 'motion3.0-video', prompt: 'p', metadata: { parameters: { resolution: '2K' } } },
      'metadata.parameters.resolution',
    ],
    ['resolution given as pixels', 'text', { model: 'motion3.0-video', prompt: 'p', resolution: '1280*720' }, 'resolution'],
    ['seed negative', 'text', { model: 'motion3.0-video', prompt: 'p', seed: -1 }, 'seed'],
    ['audio_url on the text path', 'text', { model: 'motion3.0-video', prompt: 'p', audio_url: IMAGE }, 'audio_url'],
    ['media not a list', 'image', { model: 'motion2.6-i2v', media: { type: 'video' } }, 'media'],
    ['an images item beyond the frames not a URL', 'image', { model: 'motion2.2-kf2v-flash', images: [IMAGE, LAST, 'x'] }, 'images.2'],
    ['empty images and media only', 'image', { model: 'motion2.6-i2v', images: [], media: [] }, 'image'],
    ['audio_url not a URL', 'image', { model: 'motion2.6-i2v', image: IMAGE, audio_url: 'x' }, 'audio_url'],
  ];

  it.each(refused)('%s → %s', (_name, path, body, param) => {
    const result = planMotionRequest(body, path);
    expect(result.ok ? undefined : result.param).toBe(param);
  });
});
