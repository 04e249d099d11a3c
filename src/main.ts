/**
 * `npm start`: the whole gateway on one machine (embedded default unless URLs are configured);
 * with PROCESSES=2, the supervisor of its two processes (supervisor.ts), each of which is this
 * file again with its role.
 */
import { setFlagsFromString } from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { supervise } from './supervisor.js';

const config = (() => {
  try {
    return loadConfig();
  } catch (err) {
    // A configuration mistake is the operator's to fix: one line naming the setting, no stack.
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
})();
// Read by V8 at each full collection: set before the gateway allocates, in every process (the
// supervisor's children run this file too).
if (config.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
const log = createLogger(config);
if (config.processes === 2) {
  await supervise(config, log).catch((err: unknown) => failedStart(err));
} else {
  await serve();
}

/**
 * A setting found wrong while starting (e.g. an unreadable secret file) reads as a configuration
 * mistake does: one line. Anything else is logged with its cause. Either way: exit 1, never an
 * unhandled rejection.
 */
function failedStart(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  if (message.startsWith('invalid configuration:')) process.stderr.write(`${message}\n`);
  else log.fatal({ err }, 'the gateway could not start');
  process.exit(1);
}

async function serve(): Promise<void> {
  exitWithSupervisor();
  // Loaded only here: a supervisor (PROCESSES=2) runs no gateway and keeps its memory small.
  const { createGateway } = await import('./gateway.js');
  const started = await (async () => {
    let gateway: Awaited<ReturnType<typeof createGateway>> | undefined;
    try {
      gateway = await createGateway(config, { log });
      return { gateway, address: await gateway.listen() };
    } catch (err) {
      // What was opened is closed first.
      await gateway?.close().catch(() => undefined);
      failedStart(err);
    }
  })();
  const { gateway, address } = started;

  if (gateway.generatedAdminPassword) {
    // Printed once, on the console only (never through the logger): the first administrator.
    process.stdout.write(
      `\n  First start: administrator "${config.adminUsername}" created with password ${gateway.generatedAdminPassword}\n` +
        `  Set ADMIN_PASSWORD to choose it yourself. Log in with POST ${address}/api/user/login\n\n`,
    );
  }
  log.info({ address, dataDir: config.dataDir }, 'gateway listening');

  // Past the requests' grace, the stores still close: the process exits on its own well before this.
  closeWithGrace({ delay: config.shutdownGraceMs + 10_000 }, async ({ err, signal }) => {
    if (err) log.error({ err }, 'shutting down after an error');
    else log.info({ signal }, 'shutting down');
    await gateway.close();
  });
}

/**
 * A process of a supervisor (PROCESSES=2) does not outlive it: its IPC channel closes when it
 * dies. It goes at once, as if killed with it: a supervisor started again on the same data
 * directory must not find the old engine still draining beside its new one. Watched from before
 * the gateway starts: a supervisor that dies while its child is still starting (an engine
 * catching up takes seconds) once left that child running for good, its `disconnect` missed.
 */
function exitWithSupervisor(): void {
  if (!process.send) return;
  const gone = () => {
    log.warn('the supervisor is gone; exiting with it');
    process.exit(1);
  };
  if (!process.connected) gone();
  process.once('disconnect', gone);
}
