import { describe, expect, it } from 'vitest';
import { type ArtPlan, type ArtSubmit, planArtRequest } from '../../../src/families/art/request.js';

const IMG = `data:image/png;base64,${Buffer.from('0123456789ab').toString('base64')}`;
const IMG2 = `data:image/jpeg;base64,${Buffer.from('ba9876543210').toString('base64')}`;

function accepted(kind: ArtSubmit, body: unknown): ArtPlan {
  const result = planArtRequest(kind, body);
  if (!result.ok) throw new Error(`expected acceptance, got ${result.param}: ${result.message}`);
  return result.plan;
}

describe('art submit rules: accepted', () => {
  const accepts: [string, ArtSubmit, unknown, Partial<ArtPlan>][] = [
    [
      'imagine, prompt only, unknown fields dropped',
      'imagine',
      { prompt: 'a cat', botType: 'X' },
      { action: 'IMAGINE', model: 'art_imagine', upstream: { prompt: 'a cat' } },
    ],
    [
      'imagine with references, hook and state',
      'imagine',
      { prompt: 'a cat', base64Array: [IMG, IMG2], notifyHook: 'https://h.example.com/n', state: 's1' },
      { action: 'IMAGINE', upstream: { prompt: 'a cat', base64Array: [IMG, IMG2], state: 's1' }, callbackUrl: 'https://h.example.com/n' },
    ],
    ['describe', 'describe', { base64: IMG }, { action: 'DESCRIBE', model: 'art_describe', upstream: { base64: IMG } }],
    [
      'blend defaults to SQUARE',
      'blend',
      { base64Array: [IMG, IMG2] },
      { action: 'BLEND', model: 'art_blend', upstream: { base64Array: [IMG, IMG2], dimensions: 'SQUARE' } },
    ],
    [
      'blend five, LANDSCAPE',
      'blend',
      { base64Array: Array(5).fill(IMG), dimensions: 'LANDSCAPE' },
      { upstream: { base64Array: Array(5).fill(IMG), dimensions: 'LANDSCAPE' } },
    ],
    [
      'change UPSCALE',
      'change',
      { taskId: 'task_a1', action: 'UPSCALE', index: 4 },
      { action: 'UPSCALE', model: 'art_change', parentTaskId: 'task_a1', upstream: { taskId: 'task_a1', action: 'UPSCALE', index: 4 } },
    ],
    [
      'change VARIATION',
      'change',
      { taskId: 'task_a1', action: 'VARIATION', index: 1 },
      { action: 'VARIATION', upstream: { taskId: 'task_a1', action: 'VARIATION', index: 1 } },
    ],
    [
      'change REROLL',
      'change',
      { taskId: 'task_a1', action: 'REROLL', state: '' },
      { action: 'REROLL', upstream: { taskId: 'task_a1', action: 'REROLL', state: '' } },
    ],
  ];
  it.each(accepts)('%s', (_name, kind, body, expected) => {
    const plan = accepted(kind, body);
    expect(plan).toMatchObject({ submit: kind, units: 1, ...expected });
    if (expected.upstream) expect(plan.upstream).toEqual(expected.upstream);
  });
});

describe('art submit rules: refused, naming the field', () => {
  const refuses: [string, ArtSubmit, unknown, string][] = [
    ['array body', 'imagine', [], 'body'],
    ['imagine no prompt', 'imagine', {}, 'prompt'],
    ['imagine blank prompt', 'imagine', { prompt: '   ' }, 'prompt'],
    ['imagine prompt too long', 'imagine', { prompt: 'x'.repeat(6001) }, 'prompt'],
    ['imagine empty base64Array', 'imagine', { prompt: 'x', base64Array: [] }, 'base64Array'],
    ['imagine URL reference', 'imagine', { prompt: 'x', base64Array: ['https://a.example/1.png'] }, 'base64Array'],
    ['imagine bare base64', 'imagine', { prompt: 'x', base64Array: [Buffer.from('abc').toString('base64')] }, 'base64Array'],
    ['imagine notifyHook', 'imagine', { prompt: 'x', notifyHook: 'not-a-url' }, 'notifyHook'],
    ['imagine state not a string', 'imagine', { prompt: 'x', state: 5 }, 'state'],
    ['imagine state too long', 'imagine', { prompt: 'x', state: 's'.repeat(1025) }, 'state'],
    ['describe no base64', 'describe', {}, 'base64'],
    ['describe array', 'describe', { base64: [IMG] }, 'base64'],
    ['describe text payload', 'describe', { base64: 'data:text/plain;base64,aGk=' }, 'base64'],
    ['blend missing images', 'blend', { dimensions: 'SQUARE' }, 'base64Array'],
    ['blend one image', 'blend', { base64Array: [IMG] }, 'base64Array'],
    ['blend six images', 'blend', { base64Array: Array(6).fill(IMG) }, 'base64Array'],
    ['blend lower-case dimensions', 'blend', { base64Array: [IMG, IMG], dimensions: 'square' }, 'dimensions'],
    ['change no taskId', 'change', { action: 'REROLL' }, 'taskId'],
    ['change taskId with a slash', 'change', { taskId: '../x', action: 'REROLL' }, 'taskId'],
    ['change no action', 'change', { taskId: 't' }, 'action'],
    ['change lower-case action', 'change', { taskId: 't', action: 'upscale', index: 1 }, 'action'],
    ['change index 0', 'change', { taskId: 't', action: 'UPSCALE', index: 0 }, 'index'],
    ['change index 1.5', 'change', { taskId: 't', action: 'VARIATION', index: 1.5 }, 'index'],
    ['change UPSCALE without index', 'change', { taskId: 't', action: 'UPSCALE' }, 'index'],
    ['change REROLL with index', 'change', { taskId: 't', action: 'REROLL', index: 2 }, 'index'],
  ];
  it.each(refuses)('%s → %s', (_name, kind, body, param) => {
    const result = planArtRequest(kind, body);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.param).toBe(param);
      expect(result.message.startsWith(`${param}: `)).toBe(true);
    }
  });
});
