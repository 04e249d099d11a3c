/** The one place views become answers with URLs: what it signs, and what it leaves alone. */
import { describe, expect, it } from 'vitest';
import { assetRef, parseAssetRef, resultUrlRef } from '../../src/domain/asset-ref.js';
import { createAssetSigner } from '../../src/engine/media/assets.js';
import { signAssetRefs } from '../../src/engine/media/sign-asset-refs.js';

const SECRET = 'unit-test-asset-signing-secret';
const signer = createAssetSigner(SECRET, () => 'https://api-2.example');
const oldInstance = createAssetSigner(SECRET, () => 'http://127.0.0.1:3000');
const stranger = createAssetSigner('another-secret-entirely', () => 'http://127.0.0.1:3000');

describe('asset references', () => {
  it('round-trip; text that only looks like one is none', () => {
    expect(parseAssetRef(assetRef('tasks/t1/0.png', 1_700_000_000))).toEqual({ key: 'tasks/t1/0.png', expiresAt: 1_700_000_000 });
    for (const text of ['asset-ref:', 'asset-ref:x:tasks/t1/0.png', 'asset-ref:1:tasks/t1/0.png trailing', 'a prompt', ''])
      expect(parseAssetRef(text)).toBeUndefined();
  });

  it('a result keeps a reference when delivered as a URL: new events by `delivery`, earlier ones by their `url`', () => {
    expect(resultUrlRef({ kind: 'image', assetKey: 'tasks/t1/0.png', delivery: 'url' }, 10)).toBe(assetRef('tasks/t1/0.png', 10));
    expect(resultUrlRef({ kind: 'image', assetKey: 'tasks/t1/0.png', delivery: 'b64' }, 10)).toBeUndefined();
    expect(resultUrlRef({ kind: 'text', text: 'hi' }, 10)).toBeUndefined();
    // Earlier versions: `url` next to the key; Base64 items had the key only.
    expect(resultUrlRef({ kind: 'image', assetKey: 'tasks/t1/0.png', url: oldInstance.url('tasks/t1/0.png', 10) }, 10)).toBe(assetRef('tasks/t1/0.png', 10));
    expect(resultUrlRef({ kind: 'image', assetKey: 'tasks/t1/0.png' }, 10)).toBeUndefined();
    // A URL without its key beside it: the key is read from the URL's path.
    expect(resultUrlRef({ kind: 'video', url: oldInstance.url('tasks/t1/0.mp4', 10) }, 10)).toBe(assetRef('tasks/t1/0.mp4', 10));
  });
});

describe('signAssetRefs', () => {
  it("signs the task's references wherever they are in the document, on the signer's base, and verifiably", () => {
    const doc = {
      accountId: 'a',
      body: { result_url: assetRef('tasks/t1/0.mp4', 99), data: [{ url: assetRef('tasks/t1/1.png', 99), n: 1 }], empty: '', nothing: null },
    };
    const signed = signAssetRefs(doc, signer, 't1');
    expect(signed).toEqual({
      accountId: 'a',
      body: { result_url: signer.url('tasks/t1/0.mp4', 99), data: [{ url: signer.url('tasks/t1/1.png', 99), n: 1 }], empty: '', nothing: null },
    });
    const url = new URL(signed.body.result_url);
    expect(url.origin).toBe('https://api-2.example');
    expect(signer.verify('tasks/t1/0.mp4', 99, url.searchParams.get('sig')!)).toBe(true);
    // The stored document is not changed.
    expect(doc.body.result_url).toBe(assetRef('tasks/t1/0.mp4', 99));
  });

  it("never signs another task's asset, whoever put the reference there", () => {
    const forged = { prompt: assetRef('tasks/t2/0.png', 99), also: assetRef('tasks/t10/0.png', 99) };
    expect(signAssetRefs(forged, signer, 't1')).toEqual(forged);
  });

  it("re-signs on its own base a URL an earlier version stored, only when the signature is the gateway's", () => {
    const stored = {
      url: oldInstance.url('tasks/t1/0.png', 99),
      forged: stranger.url('tasks/t1/0.png', 99),
      other: oldInstance.url('tasks/t2/0.png', 99),
      upstream: 'https://cdn.example/assets/x.png?exp=1&sig=y',
    };
    expect(signAssetRefs(stored, signer, 't1')).toEqual({ ...stored, url: signer.url('tasks/t1/0.png', 99) });
  });
});
