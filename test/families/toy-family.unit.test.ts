/**
 * Step 9 of docs/adding-a-family.md for the toy family (test/support/toy-family/): its plan,
 * table-driven, and its view, "given events, then document". The toy over HTTP is
 * toy-family.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { assetRef } from '../../src/domain/asset-ref.js';
import type { DomainEvent, EventDataOf, PriceBasis } from '../../src/domain/events.js';
import { given } from '../projections/support.js';
import { planToyRequest } from '../support/toy-family/request.js';
import { toyTaskProjection } from '../support/toy-family/view.js';

describe('toy plan', () => {
  const accepts: [string, unknown, object][] = [
    ['defaults', { model: 'toy-sketch', prompt: 'a kite' }, { units: 1, upstream: { model: 'toy-sketch', prompt: 'a kite', n: 1, style: 'pencil' } }],
    ['hd at its most', { model: 'toy-sketch-hd', prompt: 'a kite', n: 2, style: 'ink' }, { units: 2, upstream: { n: 2, style: 'ink' } }],
    [
      'the callback stays with the gateway',
      { model: 'toy-sketch', prompt: 'k', callback_url: 'https://h.example.com/cb' },
      { callbackUrl: 'https://h.example.com/cb' },
    ],
  ];
  it.each(accepts)('%s', (_name, body, expected) => {
    const result = planToyRequest(body);
    expect(result).toMatchObject({ ok: true, plan: { action: 'draw', ...expected } });
    if (result.ok) expect(result.plan.upstream).not.toHaveProperty('callback_url');
  });

  const refuses: [string, unknown, string, string][] = [
    ['not an object', [1], 'body', 'must be a JSON object'],
    ['no prompt', { model: 'toy-sketch' }, 'prompt', 'required, a non-empty string'],
    ['n a string', { model: 'toy-sketch', prompt: 'k', n: '2' }, 'n', 'must be an integer from 1 to 4'],
    ['hd beyond 2 (the plan)', { model: 'toy-sketch-hd', prompt: 'k', n: 4 }, 'n', 'toy-sketch-hd draws at most 2 sketches, got 4'],
  ];
  it.each(refuses)('refuses %s naming %s', (_name, body, param, reason) => {
    expect(planToyRequest(body)).toEqual({ ok: false, param, message: `${param}: ${reason}` });
  });
});

describe('toy view: given events, then document', () => {
  const S = 'task-t1';
  const basis: PriceBasis = { model: 'toy-sketch', group: 'default', unit: 'image', unitPrice: 1_000, groupRatioPermille: 1000, units: 3 };
  const submitted = (family = 'toy'): readonly [string, DomainEvent] => {
    const data: EventDataOf<'TaskSubmitted'> = {
      taskId: 't1',
      family,
      action: 'draw',
      model: 'toy-sketch',
      accountId: 'a1',
      tokenId: 'k1',
      group: 'default',
      channelCandidates: ['sim-toy'],
      request: { model: 'toy-sketch', prompt: 'k', n: 3, style: 'pencil' },
      reservationId: 'res_t1',
      reserved: 3_000,
      basis,
      createdAt: 1_700_000_000,
    };
    return [S, { type: 'TaskSubmitted', data }];
  };
  const doc = (events: readonly (readonly [string, DomainEvent])[]) => given(toyTaskProjection, events).get('t1');
  const first = { id: 't1', object: 'toy.sketch', model: 'toy-sketch', status: 'queued', progress: 0, created_at: 1_700_000_000, sketches: [], charged: 0 };

  it('after submit: queued, nothing drawn, nothing charged; another family is not its own', () => {
    expect(doc([submitted()])).toEqual({ accountId: 'a1', basis, body: first });
    expect(doc([submitted('clip')])).toBeUndefined();
  });

  it('drawing, then done with the sketches as asset references and the settled charge (fewer delivered, fewer charged)', () => {
    const results = [0, 1].map((i) => ({ kind: 'image' as const, assetKey: `tasks/t1/${i}.png`, delivery: 'url' as const }));
    const events: (readonly [string, DomainEvent])[] = [
      submitted(),
      [S, { type: 'TaskProgressed', data: { status: 'in_progress', progress: 50 } }],
      [S, { type: 'TaskSucceeded', data: { results, usage: { units: 2 }, assetsExpireAt: 1_700_007_200, completedAt: 1_700_000_010 } }],
    ];
    expect(doc(events.slice(0, 2))?.body).toMatchObject({ status: 'drawing', progress: 50 });
    expect(doc(events)?.body).toEqual({
      ...first,
      status: 'done',
      progress: 100,
      sketches: [0, 1].map((i) => ({ url: assetRef(`tasks/t1/${i}.png`, 1_700_007_200) })),
      charged: 2_000,
    });
    expect(doc([...events, [S, { type: 'AssetsExpired', data: { assetKeys: [] } }]])?.body.sketches).toEqual([]);
  });

  it('failed: the reason, nothing charged', () => {
    const failed: readonly [string, DomainEvent] = [S, { type: 'TaskFailed', data: { code: 'upstream_failed', reason: 'broke', completedAt: 1_700_000_010 } }];
    expect(doc([submitted(), failed])?.body).toEqual({ ...first, status: 'failed', failure: 'upstream_failed: broke' });
  });
});
