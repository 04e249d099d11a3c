import { eventually, type Client } from './gateway.js';

export const FAST_ENGINE = { SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20' };

/** Polls an image task until it is completed or failed. */
export async function waitForImageTask(client: Client, id: string, timeoutMs = 15_000) {
  return eventually(
    async () => {
      const r = await client.get(`/v1/images/async/generations/${id}`);
      if (r.status !== 200) throw new Error(`poll answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
    },
    timeoutMs,
    30,
  );
}

/** Reads a PNG's width and height from its IHDR chunk. */
export function pngSize(bytes: Buffer): { width: number; height: number } {
  expectPng(bytes);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

export function expectPng(bytes: Buffer): void {
  if (!bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('not a PNG');
}
