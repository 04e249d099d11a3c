import { describe, expect, it } from 'vitest';
import { planLyricsRequest } from '../../../src/families/tune/lyrics-request.js';
import { planMusicRequest } from '../../../src/families/tune/music-request.js';
import { TUNE_VERSIONS } from '../../../src/families/tune/schema.js';
import { type TunePlan, type TunePlanResult } from '../../../src/families/tune/plan.js';

function accepted(result: TunePlanResult): TunePlan {
  if (!result.ok) throw new Error(`expected acceptance, got ${result.param}: ${result.message}`);
  return result.plan;
}

describe('tune LYRICS rules', () => {
  const accepts: [string, unknown, Partial<TunePlan>][] = [
    ['prompt only: classic by default, unknown fields dropped', { prompt: 'sea', mv: 'x', extra: 1 }, { upstream: { prompt: 'sea', lyrics_model: 'classic' } }],
    ['remi', { prompt: 'sea', lyrics_model: 'remi' }, { upstream: { prompt: 'sea', lyrics_model: 'remi' } }],
    [
      'hookUrl becomes the callback, not sent upstream',
      { prompt: 'sea', hookUrl: 'https://h.example.com/x' },
      { upstream: { prompt: 'sea', lyrics_model: 'classic' }, callbackUrl: 'https://h.example.com/x' },
    ],
    ['null counts as omitted', { prompt: 'sea', lyrics_model: null, hookUrl: null }, { upstream: { prompt: 'sea', lyrics_model: 'classic' } }],
    ['a theme of 3,000 characters', { prompt: 't'.repeat(3000) }, { upstream: { prompt: 't'.repeat(3000), lyrics_model: 'classic' } }],
  ];
  it.each(accepts)('%s', (_name, body, expected) => {
    const plan = accepted(planLyricsRequest(body));
    expect(plan).toMatchObject({ action: 'LYRICS', model: 'tune_lyrics', units: 1, ...expected });
    if (!('callbackUrl' in expected)) expect(plan.callbackUrl).toBeUndefined();
  });

  const refuses: [string, unknown, string][] = [
    ['not an object', 'text', 'body'],
    ['no prompt', {}, 'prompt'],
    ['prompt not a string', { prompt: 3 }, 'prompt'],
    ['blank prompt', { prompt: ' \n' }, 'prompt'],
    ['prompt too long', { prompt: 'x'.repeat(3001) }, 'prompt'],
    ['lyrics_model unknown', { prompt: 'x', lyrics_model: 'CLASSIC' }, 'lyrics_model'],
    ['hookUrl not http', { prompt: 'x', hookUrl: 'file:///etc/passwd' }, 'hookUrl'],
    ['hookUrl not a string', { prompt: 'x', hookUrl: 42 }, 'hookUrl'],
  ];
  it.each(refuses)('refuses %s naming %s', (_name, body, param) => {
    const result = planLyricsRequest(body);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.param).toBe(param);
      expect(result.message.startsWith(`${param}: `)).toBe(true);
    }
  });
});

describe('tune MUSIC rules', () => {
  const accepts: [string, unknown, Record<string, unknown>, string?][] = [
    [
      'custom mode from prompt',
      { prompt: 'la', title: 'T', tags: 'pop' },
      { custom_mode: true, prompt: 'la', title: 'T', tags: 'pop', instrumental: false, mv: 'tune-v5' },
    ],
    ['description mode', { ai_description_prompt: 'a song' }, { custom_mode: false, ai_description_prompt: 'a song', instrumental: false, mv: 'tune-v5' }],
    [
      'both texts: custom mode, description dropped',
      { prompt: 'la', ai_description_prompt: 'a song' },
      { custom_mode: true, prompt: 'la', instrumental: false, mv: 'tune-v5' },
    ],
    [
      'explicit custom_mode false with description',
      { custom_mode: false, ai_description_prompt: 'd' },
      { custom_mode: false, ai_description_prompt: 'd', instrumental: false, mv: 'tune-v5' },
    ],
    [
      'instrumental custom without lyrics needs only tags',
      { custom_mode: true, instrumental: true, tags: 'ambient' },
      { custom_mode: true, tags: 'ambient', instrumental: true, mv: 'tune-v5' },
    ],
    [
      'make_instrumental alone',
      { ai_description_prompt: 'd', make_instrumental: true },
      { custom_mode: false, ai_description_prompt: 'd', instrumental: true, mv: 'tune-v5' },
    ],
    [
      'instrumental false wins over make_instrumental true',
      { ai_description_prompt: 'd', make_instrumental: true, instrumental: false },
      { custom_mode: false, ai_description_prompt: 'd', instrumental: false, mv: 'tune-v5' },
    ],
    [
      'every option, bounds included',
      {
        prompt: 'la',
        title: 't'.repeat(80),
        negative_tags: 'metal',
        style_weight: 0,
        weirdness_constraint: 1,
        audio_weight: 0.25,
        vocal_gender: 'Male',
        audio_format: 'm4a',
        mv: 'tune-v3-0',
        callback_url: 'https://h.example.com/m',
      },
      {
        custom_mode: true,
        prompt: 'la',
        title: 't'.repeat(80),
        negative_tags: 'metal',
        instrumental: false,
        mv: 'tune-v3-0',
        style_weight: 0,
        weirdness_constraint: 1,
        audio_weight: 0.25,
        vocal_gender: 'Male',
        audio_format: 'm4a',
      },
      'https://h.example.com/m',
    ],
  ];
  it.each(accepts)('%s', (_name, body, upstream, callbackUrl) => {
    const plan = accepted(planMusicRequest(body));
    expect(plan).toMatchObject({ action: 'MUSIC', model: 'tune_music', units: 1 });
    expect(plan.upstream).toEqual(upstream);
    expect(plan.callbackUrl).toBe(callbackUrl);
  });

  it.each(TUNE_VERSIONS)('accepts mv %s', (mv) => {
    expect(accepted(planMusicRequest({ prompt: 'la', mv })).upstream.mv).toBe(mv);
  });

  const refuses: [string, unknown, string][] = [
    ['array body', [], 'body'],
    ['empty body', {}, 'ai_description_prompt'],
    ['custom_mode true without lyrics', { custom_mode: true, ai_description_prompt: 'd' }, 'prompt'],
    ['custom_mode false with lyrics', { custom_mode: false, prompt: 'la', ai_description_prompt: 'd' }, 'prompt'],
    ['custom_mode not boolean', { custom_mode: 'true', prompt: 'la' }, 'custom_mode'],
    ['instrumental custom without lyrics or tags', { custom_mode: true, instrumental: true }, 'tags'],
    ['title too long', { prompt: 'la', title: 't'.repeat(81) }, 'title'],
    ['title in description mode', { ai_description_prompt: 'd', title: 'T' }, 'title'],
    ['tags in description mode', { ai_description_prompt: 'd', tags: 'pop' }, 'tags'],
    ['lyrics too long', { prompt: 'x'.repeat(5001) }, 'prompt'],
    ['description too long', { ai_description_prompt: 'x'.repeat(3001) }, 'ai_description_prompt'],
    ['mv unknown', { prompt: 'la', mv: 'tune-v2' }, 'mv'],
    ['make_instrumental not boolean', { prompt: 'la', make_instrumental: 1 }, 'make_instrumental'],
    ['style_weight below 0', { prompt: 'la', style_weight: -0.1 }, 'style_weight'],
    ['weirdness_constraint as string', { prompt: 'la', weirdness_constraint: '0.5' }, 'weirdness_constraint'],
    ['audio_weight above 1', { prompt: 'la', audio_weight: 2 }, 'audio_weight'],
    ['vocal_gender', { prompt: 'la', vocal_gender: 'F' }, 'vocal_gender'],
    ['audio_format', { prompt: 'la', audio_format: 'ogg' }, 'audio_format'],
    ['callback_url', { prompt: 'la', callback_url: 'h.example.com' }, 'callback_url'],
    ['task_id', { prompt: 'la', task_id: 't' }, 'task_id'],
    ['continue_clip_id', { prompt: 'la', continue_clip_id: 'c' }, 'continue_clip_id'],
    ['continue_at', { prompt: 'la', continue_at: 10 }, 'continue_at'],
    ['model', { prompt: 'la', model: 'tune_music' }, 'model'],
  ];
  it.each(refuses)('refuses %s naming %s', (_name, body, param) => {
    const result = planMusicRequest(body);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.param).toBe(param);
      expect(result.message.startsWith(`${param}: `)).toBe(true);
    }
  });

  it('extend fields point at the extend actions', () => {
    const result = planMusicRequest({ prompt: 'la', continue_at: 10 });
    expect(!result.ok && result.message).toMatch(/EXTEND or UPLOAD_EXTEND/);
  });
});
