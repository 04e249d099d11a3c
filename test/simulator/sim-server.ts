/** A real simulator on a loopback port, mounted at `/_sim` as the gateway mounts it. */
import Fastify, { type FastifyInstance } from 'fastify';
import { PNG } from 'pngjs';
import { expect } from 'vitest';
import { simulatorPlugin, type SimulatorOptions } from '../../src/simulator/plugin.js';

export type SimServer = { app: FastifyInstance; base: string; close: () => Promise<void> };

export async function startSim(options: SimulatorOptions = {}): Promise<SimServer> {
  const app = Fastify({ logger: false });
  await app.register(simulatorPlugin, { prefix: '/_sim', secret: 'test-secret', ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { app, base: `http://127.0.0.1:${address.port}/_sim`, close: () => app.close() };
}

/** A clock the test moves by hand. */
export function manualClock(start = 1_800_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export const AUTH = { authorization: 'Bearer sk-sim-test' };

export async function postJson(url: string, body: unknown, headers: Record<string, string> = AUTH): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

export async function getJson(url: string, headers: Record<string, string> = AUTH): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { headers });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Checks signature and IHDR, then fully decodes (CRCs, zlib) with pngjs; returns the size. */
export function expectPng(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  expect(bytes.toString('ascii', 12, 16)).toBe('IHDR');
  const size = { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  const decoded = PNG.sync.read(bytes);
  expect({ width: decoded.width, height: decoded.height }).toEqual(size);
  return size;
}

export async function download(url: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}
