/**
 * Runs the upstream simulator alone: `tsx src/simulator/main.ts`.
 * Env: `PORT` (4010), `HOST` (127.0.0.1), `SIM_PREFIX` (`/_sim`, same paths as inside the
 * gateway), `SIM_STEP_MS`, `SIM_SECRET` (use the gateway's value to answer its ids).
 * A gateway uses it instead of its own mount with `SIMULATOR_URL=http://HOST:PORT` (the seeded
 * `/_sim` channels then resolve here); `GET /healthz` answers 200 once it listens.
 */
import closeWithGrace from 'close-with-grace';
import Fastify from 'fastify';
import { serverCloser } from '../lib/close-server.js';
import { simulatorPlugin } from './plugin.js';

const port = Number(process.env.PORT ?? 4010);
const host = process.env.HOST ?? '127.0.0.1';
const prefix = process.env.SIM_PREFIX ?? '/_sim';
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid PORT ${process.env.PORT}`);

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? 'info' }, bodyLimit: 40 * 1024 * 1024 });
const closeServer = serverCloser(app);
await app.register(simulatorPlugin, { prefix });
// Outside the prefix: whoever starts this process (the bench, a compose file) waits on it.
app.get('/healthz', async () => ({ status: 'ok' }));

closeWithGrace({ delay: 5000 }, async ({ err }) => {
  if (err) app.log.error({ err }, 'simulator stopping after an error');
  await closeServer(3000);
});

await app.listen({ port, host });
