/**
 * Inline inputs stored aside (src/engine/media/inline-inputs.ts) on the embedded asset store: which
 * strings go, that what comes back is byte for byte what was sent, and that a task resolves
 * only its own inputs.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createFsAssetStore } from '../../src/adapters/fs/asset-store.js';
import {
  INLINE_INPUT_MIN_CHARS,
  INPUT_REFERENCE_PREFIX,
  InputUnavailableError,
  inputKeysOf,
  planInlineInputs,
  resolveInlineInputs,
  storeInlineInputs,
} from '../../src/engine/media/inline-inputs.js';
import { tempDir } from '../support/tmp.js';

const dir = tempDir('inline-inputs-');
const assets = createFsAssetStore({ dir: dir.path });
afterAll(async () => {
  await assets.close();
  dir.remove();
});

const big = (fill: string) => fill.repeat(Math.ceil((INLINE_INPUT_MIN_CHARS + 1) / fill.length)).slice(0, INLINE_INPUT_MIN_CHARS + 1);
// Not canonical Base64 (no padding, line breaks): restored as sent, not as re-encoded.
const DATA_URI = `data:image/png;base64,${big('iVBORw0KGgo\n')}`;
const RAW = big('QUJD');
const isReference = (value: unknown) => typeof value === 'string' && value.startsWith(INPUT_REFERENCE_PREFIX);

describe('planInlineInputs', () => {
  it('stores large data URIs anywhere and raw Base64 only where declared; the rest stays inline', () => {
    const request = {
      prompt: big('a cat '),
      long_prose: `data: ${big('not a uri ')}`,
      base64Array: [DATA_URI, 'data:image/png;base64,AAAA'],
      nested: { deep: [{ url: DATA_URI }] },
      image: RAW,
      other: RAW,
      n: 2,
    };
    const { request: recorded, inputs } = planInlineInputs('task_A', request, ['image']);
    expect(inputs).toHaveLength(3);
    expect(recorded.prompt).toBe(request.prompt);
    expect(recorded.long_prose).toBe(request.long_prose);
    expect(recorded.other).toBe(RAW);
    expect(recorded.n).toBe(2);
    const [first, small] = recorded.base64Array as string[];
    expect(isReference(first)).toBe(true);
    expect(small).toBe('data:image/png;base64,AAAA');
    expect(isReference((recorded.nested as { deep: Array<{ url: string }> }).deep[0]!.url)).toBe(true);
    expect(recorded.image).toMatch(/^asset-input:inputs\/task_A\/[0-9a-f]{12}\/2\.base64$/);
    // What stays inline: the prompt, the prose and the undeclared Base64, plus short references.
    expect(JSON.stringify(recorded).length).toBeLessThan(3 * (INLINE_INPUT_MIN_CHARS + 10) + 600);
    // The caller's request is left as it was.
    expect(request.base64Array[0]).toBe(DATA_URI);
  });

  it('gives every submit attempt its own keys', () => {
    const a = planInlineInputs('task_A', { image: DATA_URI });
    const b = planInlineInputs('task_A', { image: DATA_URI });
    expect(a.inputs[0]!.key).not.toBe(b.inputs[0]!.key);
  });
});

describe('resolveInlineInputs', () => {
  it('puts back exactly what was sent', async () => {
    const request = { base64Array: [DATA_URI, DATA_URI.replace('png', 'jpeg')], image: RAW, prompt: 'x' };
    const planned = planInlineInputs('task_B', request, ['image']);
    await storeInlineInputs(assets, planned.inputs);
    expect(inputKeysOf('task_B', planned.request)).toEqual(planned.inputs.map((i) => i.key));
    expect(await resolveInlineInputs(assets, 'task_B', planned.request)).toEqual(request);
  });

  it("resolves only the task's own inputs, and fails when one is gone", async () => {
    const planned = planInlineInputs('task_C', { image: DATA_URI });
    await storeInlineInputs(assets, planned.inputs);
    // Another task's request naming task_C's input: sent on as text, never resolved.
    const foreign = { metadata: { note: planned.request.image } };
    expect(await resolveInlineInputs(assets, 'task_D', foreign)).toEqual(foreign);
    expect(inputKeysOf('task_D', foreign)).toEqual([]);

    await assets.delete(planned.inputs[0]!.key);
    await expect(resolveInlineInputs(assets, 'task_C', planned.request)).rejects.toBeInstanceOf(InputUnavailableError);
  });
});
