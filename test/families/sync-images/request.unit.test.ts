/** Request rules of the synchronous std-image / pro-image endpoints (spec 4.5, 4.6), table-driven. */
import { describe, expect, it } from 'vitest';
import { planChatRequest, planImagesRequest, type SyncImagePlan } from '../../../src/families/sync-images/rules.js';
import { markdownImages, sumUsage } from '../../../src/families/sync-images/upstream.js';
import { nearestPreset, parseCustomSize } from '../../../src/families/picgen/size.js';

const user = (content: unknown) => ({ role: 'user', content });
const DATA = 'data:image/png;base64,iVBORw0KGgo=';

function accepted(result: ReturnType<typeof planChatRequest>): SyncImagePlan {
  if (!result.ok) throw new Error(`refused: ${result.message}`);
  return result.plan;
}

describe('chat-style rules (4.5)', () => {
  it('the prompt is the text of the last user message; options take the 4.5 values; unknown fields are dropped', () => {
    const plan = accepted(
      planChatRequest({
        model: 'pro-image',
        messages: [
          { role: 'system', content: 'be brief' },
          user('first'),
          { role: 'assistant', content: 'ok' },
          user([
            { type: 'text', text: 'second' },
            { type: 'text', text: 'line' },
          ]),
        ],
        n: 2,
        size: '1536x1024',
        quality: 'medium',
        background: 'opaque',
        output_format: 'jpeg',
        moderation: 'auto',
        user: 'u1',
        temperature: 0.3,
      }),
    );
    expect(plan).toMatchObject({
      model: 'pro-image',
      action: 'chat/generate',
      units: 2,
      stream: false,
      echo: { size: '1536x1024', quality: 'medium', background: 'opaque', output_format: 'jpeg' },
    });
    expect(plan.upstream).toEqual({
      model: 'pro-image',
      messages: [
        { role: 'system', content: 'be brief' },
        user('first'),
        { role: 'assistant', content: 'ok' },
        user([
          { type: 'text', text: 'second' },
          { type: 'text', text: 'line' },
        ]),
      ],
      n: 2,
      size: '1536x1024',
      quality: 'medium',
      background: 'opaque',
      output_format: 'jpeg',
      moderation: 'auto',
      user: 'u1',
    });
  });

  it('image_url parts (object or string form, URL or data URI) make it image-to-image; only URLs go to the guard', () => {
    const plan = accepted(
      planChatRequest({
        model: 'std-image',
        stream: true,
        messages: [
          user([
            { type: 'text', text: 'p' },
            { type: 'image_url', image_url: 'https://a.example/1.png' },
            { type: 'image_url', image_url: { url: DATA, detail: 'high' } },
          ]),
        ],
      }),
    );
    expect(plan).toMatchObject({
      action: 'chat/edit',
      stream: true,
      references: [{ param: 'messages.0.content.1.image_url.url', url: 'https://a.example/1.png' }],
    });
    expect(plan.recorded.messages).toEqual([
      user([
        { type: 'text', text: 'p' },
        { type: 'image_url', image_url: { url: 'https://a.example/1.png' } },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,…(8 bytes)', detail: 'high' } },
      ]),
    ]);
  });

  const refused: Array<[string, unknown, string]> = [
    ['not an object', 'x', 'body'],
    ['no model', { messages: [user('p')] }, 'model'],
    ['another model', { model: 'vendor-picgen-4-0-250828', messages: [user('p')] }, 'model'],
    ['no messages', { model: 'std-image' }, 'messages'],
    ['empty messages', { model: 'std-image', messages: [] }, 'messages'],
    ['65 messages', { model: 'std-image', messages: Array.from({ length: 65 }, () => user('p')) }, 'messages'],
    ['no user message', { model: 'std-image', messages: [{ role: 'system', content: 'p' }] }, 'messages'],
    ['unknown role', { model: 'std-image', messages: [{ role: 'tool', content: 'p' }] }, 'messages.0.role'],
    ['message not an object', { model: 'std-image', messages: ['p'] }, 'messages.0'],
    ['content missing', { model: 'std-image', messages: [{ role: 'user' }] }, 'messages.0.content'],
    ['blank prompt', { model: 'std-image', messages: [user('  ')] }, 'messages.0.content'],
    ['only an image', { model: 'std-image', messages: [user([{ type: 'image_url', image_url: { url: DATA } }])] }, 'messages.0.content'],
    ['unknown part type', { model: 'std-image', messages: [user([{ type: 'audio', text: 'p' }])] }, 'messages.0.content.0.type'],
    ['text part without text', { model: 'std-image', messages: [user([{ type: 'text' }])] }, 'messages.0.content.0.text'],
    [
      'image_url not a URL',
      {
        model: 'std-image',
        messages: [
          user([
            { type: 'text', text: 'p' },
            { type: 'image_url', image_url: { url: 'ftp://x/y.png' } },
          ]),
        ],
      },
      'messages.0.content.1.image_url.url',
    ],
    [
      'image_url uppercase data URI',
      {
        model: 'std-image',
        messages: [
          user([
            { type: 'text', text: 'p' },
            { type: 'image_url', image_url: { url: 'data:image/PNG;base64,AAAA' } },
          ]),
        ],
      },
      'messages.0.content.1.image_url.url',
    ],
    [
      'image_url bad detail',
      {
        model: 'std-image',
        messages: [
          user([
            { type: 'text', text: 'p' },
            { type: 'image_url', image_url: { url: DATA, detail: 'max' } },
          ]),
        ],
      },
      'messages.0.content.1.image_url.detail',
    ],
    [
      'image in a system message',
      { model: 'std-image', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: DATA } }] }, user('p')] },
      'messages.0.content.0',
    ],
    [
      '17 images',
      {
        model: 'std-image',
        messages: [user([{ type: 'text', text: 'p' }, ...Array.from({ length: 17 }, () => ({ type: 'image_url', image_url: { url: DATA } }))])],
      },
      'messages',
    ],
    ['stream not boolean', { model: 'std-image', messages: [user('p')], stream: 1 }, 'stream'],
    ['n 0', { model: 'std-image', messages: [user('p')], n: 0 }, 'n'],
    ['n 129', { model: 'std-image', messages: [user('p')], n: 129 }, 'n'],
    ['size', { model: 'std-image', messages: [user('p')], size: 'huge' }, 'size'],
    ['quality', { model: 'std-image', messages: [user('p')], quality: 'ultra' }, 'quality'],
    ['background', { model: 'std-image', messages: [user('p')], background: 'pink' }, 'background'],
    ['output_format', { model: 'std-image', messages: [user('p')], output_format: 'gif' }, 'output_format'],
    ['moderation', { model: 'std-image', messages: [user('p')], moderation: 'none' }, 'moderation'],
    ['user not a string', { model: 'std-image', messages: [user('p')], user: 5 }, 'user'],
  ];
  it.each(refused)('%s → refused naming %s', (_name, body, param) => {
    const result = planChatRequest(body);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.param).toBe(param);
      expect(result.message.startsWith(`${param}: `)).toBe(true);
    }
  });
});

describe('images-style rules (4.6)', () => {
  it.each([
    ['std-image defaults to url', { model: 'std-image', prompt: 'p' }, 'url'],
    ['pro-image defaults to b64_json', { model: 'pro-image', prompt: 'p' }, 'b64_json'],
    ['response_format chooses', { model: 'pro-image', prompt: 'p', response_format: 'url' }, 'url'],
  ])('%s', (_name, body, format) => {
    expect(accepted(planImagesRequest(body)).responseFormat).toBe(format);
  });

  it('style is forwarded unchanged; n, size, quality, background, output_format, moderation, user as 4.5', () => {
    const plan = accepted(
      planImagesRequest({
        model: 'std-image',
        prompt: 'p',
        style: 'Vivid!',
        n: 4,
        size: 'auto',
        quality: 'low',
        background: 'none',
        output_format: 'webp',
        moderation: 'high',
        user: '',
      }),
    );
    expect(plan.upstream).toEqual({
      model: 'std-image',
      prompt: 'p',
      style: 'Vivid!',
      n: 4,
      size: 'auto',
      quality: 'low',
      background: 'none',
      output_format: 'webp',
      moderation: 'high',
      user: '',
    });
    expect(plan.units).toBe(4);
  });

  it.each([
    ['prompt missing', { model: 'std-image' }, 'prompt'],
    ['image', { model: 'std-image', prompt: 'p', image: 'https://a.example/1.png' }, 'image'],
    ['images', { model: 'pro-image', prompt: 'p', images: [] }, 'images'],
    ['style too long', { model: 'std-image', prompt: 'p', style: 'x'.repeat(257) }, 'style'],
    ['response_format', { model: 'std-image', prompt: 'p', response_format: 'png' }, 'response_format'],
  ])('%s → refused naming %s', (_name, body, param) => {
    const result = planImagesRequest(body);
    expect(result.ok ? undefined : result.param).toBe(param);
  });
});

describe('helpers', () => {
  it('markdownImages reads URL and data-URI links, ignoring other links', () => {
    expect(
      markdownImages(
        'here ![a](https://x.example/1.png) and ![b](/files/2.png "t") [c](https://x.example/3) ![d](data:image/png;base64,QUJD) ![e](javascript:x)',
      ),
    ).toEqual([{ url: 'https://x.example/1.png' }, { url: '/files/2.png' }, { b64: 'QUJD' }]);
  });

  it('sumUsage adds the per-image usages of a stream, nested details too', () => {
    expect(
      sumUsage([{ total_tokens: 5, input_tokens_details: { text_tokens: 2 } }, { total_tokens: 3, input_tokens_details: { text_tokens: 1 } }, null]),
    ).toEqual({ total_tokens: 8, input_tokens_details: { text_tokens: 3 } });
  });

  it('picgen custom sizes: separators, no leading zeros, priced at the nearest preset', () => {
    expect(parseCustomSize('2048×1024')).toEqual({ width: 2048, height: 1024 });
    expect(parseCustomSize('2048*1024')).toEqual({ width: 2048, height: 1024 });
    expect(parseCustomSize('02048x1024')).toBeUndefined();
    expect(parseCustomSize('2048x')).toBeUndefined();
    expect(nearestPreset(1024 * 1024)).toBe('1K');
    expect(nearestPreset(2560 * 1440)).toBe('2K');
    expect(nearestPreset(1600 * 1500)).toBe('1.5K');
    expect(nearestPreset(4096 * 4096)).toBe('4K');
  });
});
