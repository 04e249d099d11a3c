/** An answer that drifts from its declared response schema: sent and logged, or refused when strict. */
import Fastify from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { responseSerializer } from '../../src/http/response-serializer.js';

async function serverWith(mode: 'log' | 'strict', logged: string[]) {
  const log = pino({ level: 'error' }, { write: (line: string) => void logged.push(line) });
  const app = Fastify({ loggerInstance: log });
  app.setSerializerCompiler(responseSerializer(app.log, mode));
  const Answer = z.object({ id: z.string(), count: z.number() });
  app.get('/matches', { schema: { response: { 200: Answer } } }, async () => ({ id: 'a', count: 1, internal: 'dropped' }));
  app.get('/drifts', { schema: { response: { 200: Answer } } }, async () => ({ id: 'a', count: 'one' }));
  await app.ready();
  return app;
}

describe('response serializer', () => {
  it('a matching answer is sent as the schema parses it (undeclared fields dropped)', async () => {
    const app = await serverWith('log', []);
    const res = await app.inject('/matches');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: 'a', count: 1 });
  });

  it('log mode: a drifting answer is sent as produced and logged as an error naming the route', async () => {
    const logged: string[] = [];
    const app = await serverWith('log', logged);
    const res = await app.inject('/drifts');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: 'a', count: 'one' });
    const line = logged.map((l) => JSON.parse(l) as { msg: string; route: string }).find((l) => l.msg.includes('declared response schema'));
    expect(line?.route).toBe('/drifts');
  });

  it('strict mode: a drifting answer fails the request', async () => {
    const app = await serverWith('strict', []);
    const res = await app.inject('/drifts');
    expect(res.statusCode).toBe(500);
  });
});

describe('response serializer: kept JSON of frozen answers', () => {
  it('a frozen answer sent again is the JSON it was; an unfrozen one is serialised anew each time', async () => {
    const app = Fastify({ logger: false });
    app.setSerializerCompiler(responseSerializer(app.log, 'strict'));
    let checks = 0;
    const Answer = z.object({ id: z.string(), count: z.number() }).refine(() => ++checks > 0);
    const frozen = Object.freeze({ id: 'f', count: 1 });
    const open = { id: 'o', count: 1 };
    app.get('/frozen', { schema: { response: { 200: Answer } } }, async () => frozen);
    app.get('/open', { schema: { response: { 200: Answer } } }, async () => open);
    await app.ready();
    expect((await app.inject('/frozen')).json()).toEqual({ id: 'f', count: 1 });
    expect((await app.inject('/frozen')).json()).toEqual({ id: 'f', count: 1 });
    expect(checks).toBe(1);
    expect((await app.inject('/open')).json()).toEqual({ id: 'o', count: 1 });
    open.count = 2;
    expect((await app.inject('/open')).json()).toEqual({ id: 'o', count: 2 });
    expect(checks).toBe(3);
  });
});
