/** readSse: an upstream's event stream as it arrives, in chunks cut anywhere. */
import { describe, expect, it } from 'vitest';
import { readSse, type SseFrame } from '../../../src/families/sync-images/sse.js';

async function framesOf(chunks: readonly string[], maxFrameChars?: number): Promise<SseFrame[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const c of chunks) yield new TextEncoder().encode(c);
  }
  const frames: SseFrame[] = [];
  for await (const frame of readSse(body(), maxFrameChars)) frames.push(frame);
  return frames;
}

describe('readSse', () => {
  it('joins frames cut across chunks (inside a line, inside a UTF-8 character), skips comments, joins multi-line data', async () => {
    const text = ': keep-alive\n\nevent: image_generation.partial_image\ndata: {"a":"é"}\n\ndata: line one\r\ndata: line two\r\n\r\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(text);
    // Cut every 3 bytes: the é (two bytes) and the CRLFs fall across chunks.
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 3) chunks.push(bytes.subarray(i, i + 3));
    async function* body(): AsyncGenerator<Uint8Array> {
      yield* chunks;
    }
    const frames: SseFrame[] = [];
    for await (const frame of readSse(body())) frames.push(frame);
    expect(frames).toEqual([
      { event: 'image_generation.partial_image', data: '{"a":"é"}' },
      { event: undefined, data: 'line one\nline two' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('keeps a last frame whose blank line never came', async () => {
    expect(await framesOf(['data: one\n\n', 'event: x\ndata: two'])).toEqual([
      { event: undefined, data: 'one' },
      { event: 'x', data: 'two' },
    ]);
  });

  it('fails on a frame longer than the limit instead of growing', async () => {
    const endless = ['data: ', ...Array.from({ length: 20 }, () => 'x'.repeat(100))];
    await expect(framesOf(endless, 1_000)).rejects.toThrow('an event of more than 1000 characters');
    // Within the limit, the same frame is read.
    expect(await framesOf([...endless, '\n\n'], 10_000)).toEqual([{ event: undefined, data: 'x'.repeat(2_000) }]);
  });
});
