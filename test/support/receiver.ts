/** A local webhook receiver on loopback: records every request, answers as told. */
import Fastify from 'fastify';

export interface Received {
  at: number;
  headers: Record<string, string>;
  body: string;
}

export async function startReceiver(answer: (n: number) => number | 'hang') {
  const received: Received[] = [];
  const app = Fastify();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.post('/hook', async (request, reply) => {
    received.push({ at: Date.now(), headers: request.headers as Record<string, string>, body: request.body as string });
    const a = answer(received.length);
    if (a === 'hang') await new Promise((r) => setTimeout(r, 5000));
    return reply.status(a === 'hang' ? 200 : a).send({ ok: true });
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `${url}/hook`, received, close: () => app.close() };
}
