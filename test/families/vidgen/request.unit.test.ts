import { describe, expect, it } from 'vitest';
import { vidgenModels } from '../../../src/families/vidgen/catalog.js';
import { reservationTier, VIDGEN_MODELS } from '../../../src/families/vidgen/models.js';
import { planVidgenRequest } from '../../../src/families/vidgen/request.js';
import { type VideoPlan } from '../../../src/families/kit/video.js';

const URL_A = 'https://media.example.com/a.png';
const VIDEO = 'https://media.example.com/v.mp4';
const AUDIO = 'https://media.example.com/a.mp3';
const img = (role: string) => ({ type: 'image_url', role, image_url: { url: URL_A } });
const video = { type: 'video_url', role: 'reference_video', video_url: { url: VIDEO } };
const audio = { type: 'audio_url', role: 'reference_audio', audio_url: { url: AUDIO } };

function accepted(body: unknown): VideoPlan {
  const result = planVidgenRequest(body);
  if (!result.ok) throw new Error(`expected acceptance, got ${result.message}`);
  return result.plan;
}

describe('vidgen request rules: accepted requests and their plans', () => {
  const cases: [string, Record<string, unknown>, Partial<VideoPlan>][] = [
    [
      'text only: 5 s at the highest tier up to 1080p, nothing but model and prompt upstream',
      { model: 'vendor-vidgen-2-0-260128', prompt: 'a cat', style: 'ignored' },
      { action: 'text2video', units: 5, tier: '1080p', upstream: { model: 'vendor-vidgen-2-0-260128', prompt: 'a cat' } },
    ],
    [
      'seconds as numeric string, resolution normalised to lower case',
      { model: 'vendor-vidgen-2-0-mini-260615', prompt: 'x', seconds: '12', metadata: { resolution: '480P' } },
      { units: 12, tier: '480p', upstream: { model: 'vendor-vidgen-2-0-mini-260615', prompt: 'x', seconds: 12, metadata: { resolution: '480p' } } },
    ],
    [
      'seconds 0 lets the upstream choose: not sent, reserved as 5',
      { model: 'vendor-vidgen-2-5-260628', prompt: 'x', seconds: 0 },
      { units: 5, upstream: { model: 'vendor-vidgen-2-5-260628', prompt: 'x' } },
    ],
    ['seconds 3600 is the gateway maximum', { model: 'vendor-vidgen-2-5-260628', prompt: 'x', seconds: 3600 }, { units: 3600 }],
    ['4k on the 2.0 model', { model: 'vendor-vidgen-2-0-260128', prompt: 'x', metadata: { resolution: '4K' } }, { tier: '4k' }],
    [
      '1.5 model: generate_audio defaults to true and is priced',
      { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x' },
      { extras: ['audio'], upstream: { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x', metadata: { generate_audio: true } } },
    ],
    [
      '1.5 model without audio is not priced for it',
      { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x', metadata: { generate_audio: false } },
      { upstream: { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x', metadata: { generate_audio: false } } },
    ],
    [
      'every metadata key; callback_url kept out of the upstream body',
      {
        model: 'vendor-vidgen-2-0-260128',
        prompt: 'x',
        metadata: {
          resolution: '720p',
          ratio: 'adaptive',
          frames: 121,
          seed: -1,
          generate_audio: true,
          watermark: false,
          camera_fixed: false,
          draft: true,
          callback_url: 'http://hooks.example.com/x',
          service_tier: 'flex',
        },
      },
      {
        callbackUrl: 'http://hooks.example.com/x',
        upstream: {
          model: 'vendor-vidgen-2-0-260128',
          prompt: 'x',
          metadata: {
            resolution: '720p',
            ratio: 'adaptive',
            frames: 121,
            seed: -1,
            generate_audio: true,
            watermark: false,
            camera_fixed: false,
            draft: true,
            service_tier: 'flex',
          },
        },
      },
    ],
    [
      'first and last frames make image2video',
      { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'x', metadata: { content: [img('first_frame'), img('last_frame')] } },
      { action: 'image2video' },
    ],
    [
      'reference images on the lite i2v model',
      { model: 'vendor-vidgen-1-0-lite-i2v', prompt: 'x', metadata: { content: [img('reference_image')] } },
      { action: 'reference2video' },
    ],
    [
      '9 images, 3 videos, 3 audio on a 2.x model',
      {
        model: 'vendor-vidgen-2-5-260628',
        prompt: 'x',
        metadata: { content: [...Array(9).fill(img('reference_image')), video, video, video, audio, audio, audio] },
      },
      { action: 'reference2video' },
    ],
    ['an empty content list is text-to-video', { model: 'vendor-vidgen-2-5-260628', prompt: 'x', metadata: { content: [] } }, { action: 'text2video' }],
    // Spec 4.3 names no per-model limit on reference images or audio, nor on frames with references.
    [
      'reference images on the 1.0 pro model',
      { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'x', metadata: { content: [img('reference_image')] } },
      { action: 'reference2video' },
    ],
    [
      'reference images on the text-to-video lite model',
      { model: 'vendor-vidgen-1-0-lite-t2v', prompt: 'x', metadata: { content: [img('reference_image')] } },
      { action: 'reference2video' },
    ],
    [
      'audio with a frame on the 1.5 model',
      { model: 'vendor-vidgen-1-5-pro-251215', prompt: 'x', metadata: { content: [img('first_frame'), audio] } },
      { action: 'image2video', extras: ['audio'] },
    ],
    [
      'frames mixed with reference media',
      { model: 'vendor-vidgen-2-0-260128', prompt: 'x', metadata: { content: [img('first_frame'), img('last_frame'), img('reference_image'), video, audio] } },
      { action: 'image2video' },
    ],
    [
      'frames asking for more than the seconds reserve the longer video',
      { model: 'vendor-vidgen-2-0-260128', prompt: 'x', seconds: 4, metadata: { frames: 241 } },
      { units: 10, upstream: { model: 'vendor-vidgen-2-0-260128', prompt: 'x', seconds: 4, metadata: { frames: 241 } } },
    ],
    ['frames shorter than the default reserve the default', { model: 'vendor-vidgen-2-0-260128', prompt: 'x', metadata: { frames: 29 } }, { units: 5 }],
    ['frames at the maximum reserve 3600 s', { model: 'vendor-vidgen-2-0-260128', prompt: 'x', metadata: { frames: 86_401 } }, { units: 3600 }],
  ];

  it.each(cases)('%s', (_name, body, expected) => {
    expect(accepted(body)).toMatchObject(expected);
  });

  it('extras appear only on the audio-priced model', () => {
    expect(accepted({ model: 'vendor-vidgen-2-0-260128', prompt: 'x', metadata: { generate_audio: true } }).extras).toBeUndefined();
  });

  it('reservation tiers follow the spec table', () => {
    expect(Object.fromEntries(vidgenModels.map((m) => [m, reservationTier(VIDGEN_MODELS[m])]))).toEqual({
      'vendor-vidgen-1-0-pro-250528': '1080p',
      'vendor-vidgen-1-0-lite-t2v': '1080p',
      'vendor-vidgen-1-0-lite-i2v': '1080p',
      'vendor-vidgen-1-5-pro-251215': '1080p',
      'vendor-vidgen-2-0-260128': '1080p',
      'vendor-vidgen-2-0-fast-260128': '720p',
      'vendor-vidgen-2-0-mini-260615': '720p',
      'vendor-vidgen-2-5-260628': '1080p',
    });
  });
});

describe('vidgen request rules: refusals name the field first', () => {
  const m2 = 'vendor-vidgen-2-0-260128';
  const refused: [string, unknown, string][] = [
    ['not an object', 'x', 'body'],
    ['model missing', { prompt: 'x' }, 'model'],
    ['model not vidgen', { model: 'Vid-H3', prompt: 'x' }, 'model'],
    ['prompt missing', { model: m2 }, 'prompt'],
    ['seconds 3601', { model: m2, prompt: 'x', seconds: 3601 }, 'seconds'],
    ['seconds with a sign', { model: m2, prompt: 'x', seconds: '+5' }, 'seconds'],
    ['seconds boolean', { model: m2, prompt: 'x', seconds: true }, 'seconds'],
    ['resolution 1080p on fast', { model: 'vendor-vidgen-2-0-fast-260128', prompt: 'x', metadata: { resolution: '1080p' } }, 'metadata.resolution'],
    ['resolution 4k on 2-5', { model: 'vendor-vidgen-2-5-260628', prompt: 'x', metadata: { resolution: '4k' } }, 'metadata.resolution'],
    ['resolution as number', { model: m2, prompt: 'x', metadata: { resolution: 720 } }, 'metadata.resolution'],
    ['ratio free text', { model: m2, prompt: 'x', metadata: { ratio: 'wide' } }, 'metadata.ratio'],
    ['frames 0', { model: m2, prompt: 'x', metadata: { frames: 0 } }, 'metadata.frames'],
    ['seed too big', { model: m2, prompt: 'x', metadata: { seed: 2 ** 33 } }, 'metadata.seed'],
    ['draft as string', { model: m2, prompt: 'x', metadata: { draft: 'true' } }, 'metadata.draft'],
    ['service tier unknown', { model: m2, prompt: 'x', metadata: { service_tier: 'gold' } }, 'metadata.service_tier'],
    ['unknown metadata key', { model: m2, prompt: 'x', metadata: { return_last_frame: true } }, 'metadata.return_last_frame'],
    ['callback not a URL', { model: m2, prompt: 'x', metadata: { callback_url: 'example.com/hook' } }, 'metadata.callback_url'],
    // The same bound as every family's callback address (kit/fields.ts, CALLBACK_URL_MAX).
    [
      'callback longer than 2,048 characters',
      { model: m2, prompt: 'x', metadata: { callback_url: `https://hooks.example.com/${'a'.repeat(2048)}` } },
      'metadata.callback_url',
    ],
    [
      'item missing its url holder',
      { model: m2, prompt: 'x', metadata: { content: [{ type: 'image_url', role: 'reference_image' }] } },
      'metadata.content.0.image_url',
    ],
    [
      'audio role on video',
      { model: m2, prompt: 'x', metadata: { content: [{ type: 'video_url', role: 'reference_audio', video_url: { url: VIDEO } }] } },
      'metadata.content.0.role',
    ],
    ['two first frames', { model: m2, prompt: 'x', metadata: { content: [img('first_frame'), img('first_frame')] } }, 'metadata.content'],
    ['two last frames', { model: m2, prompt: 'x', metadata: { content: [img('first_frame'), img('last_frame'), img('last_frame')] } }, 'metadata.content'],
    [
      'last frame without first, even with references',
      { model: m2, prompt: 'x', metadata: { content: [img('last_frame'), img('reference_image')] } },
      'metadata.content',
    ],
    ['audio-only', { model: m2, prompt: 'x', metadata: { content: [audio] } }, 'metadata.content'],
    ['audio-only on a 1.x model', { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'x', metadata: { content: [audio, audio] } }, 'metadata.content'],
    [
      'reference video on 1.0 pro',
      { model: 'vendor-vidgen-1-0-pro-250528', prompt: 'x', metadata: { content: [img('reference_image'), video] } },
      'metadata.content',
    ],
    [
      'frames on the text-to-video lite model',
      { model: 'vendor-vidgen-1-0-lite-t2v', prompt: 'x', metadata: { content: [img('first_frame')] } },
      'metadata.content',
    ],
    ['frames beyond 3600 s', { model: m2, prompt: 'x', metadata: { frames: 86_402 } }, 'metadata.frames'],
    ['seed below -1', { model: m2, prompt: 'x', metadata: { seed: -2 } }, 'metadata.seed'],
  ];

  it.each(refused)('%s → %s', (_name, body, param) => {
    const result = planVidgenRequest(body);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.param).toBe(param);
    expect(result.message.startsWith(`${param}: `)).toBe(true);
  });
});
