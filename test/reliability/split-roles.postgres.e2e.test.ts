/**
 * The split roles (split-roles.scenario.ts) on PostgreSQL for the events and the views (the
 * assets in the DATA_DIR every process shares), with a PostgreSQL server of this suite's own:
 * scripts/postgres-local.sh with a state directory of its own, so the crash and restart in the
 * middle of the load (SIGQUIT, PostgreSQL's immediate shutdown; WAL recovery on the next start)
 * reaches no other suite's server. Needs the server binaries of Debian's `postgresql` package:
 * skipped with one line without them, failed under REQUIRE_POSTGRES=1.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { createPostgresEventStore } from '../../src/adapters/postgres/event-store.js';
import { createPostgresViewStore } from '../../src/adapters/postgres/view-store.js';
import { tempDir } from '../support/tmp.js';
import { splitRolesSuite } from './split-roles.scenario.js';

const SCHEMA = 'split_roles';
const installed =
  process.env.POSTGRES_LOCAL_BIN ??
  readdirSync('/usr/lib/postgresql', { withFileTypes: true }).find((d) => existsSync(`/usr/lib/postgresql/${d.name}/bin/initdb`))?.name;
const state = tempDir('split-roles-postgres-');
let url = '';
// The same on every role, as a deployment's must be.
const channelKeysSecret = randomBytes(32).toString('base64');

/** scripts/postgres-local.sh on this suite's own state directory: its stdout once it exits 0. */
function server(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['scripts/postgres-local.sh', ...args], {
      env: { ...process.env, POSTGRES_LOCAL_STATE: state.path, POSTGRES_LOCAL_PORT: '56432' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`postgres-local.sh ${args.join(' ')} exited with ${code}: ${err}`))));
  });
}

splitRolesSuite({
  name: 'PostgreSQL',
  ...(installed ? {} : { missing: 'no PostgreSQL server binaries (Debian: apt-get install postgresql; or POSTGRES_LOCAL_BIN)' }),
  required: process.env.REQUIRE_POSTGRES === '1',
  async start() {
    const printed = /^POSTGRES_URL=(\S+)$/m.exec(await server('start'));
    if (!printed) throw new Error('postgres-local.sh start printed no POSTGRES_URL');
    url = printed[1]!;
  },
  env: () => ({ POSTGRES_URL: url, POSTGRES_SCHEMA: SCHEMA, CHANNEL_KEYS_SECRET: channelKeysSecret }),
  openEvents: () => createPostgresEventStore({ url, schema: SCHEMA }),
  openViews: () => createPostgresViewStore({ url, schema: SCHEMA }),
  crashRestart: async (downSeconds) => void (await server('crash-restart', String(downSeconds))),
  async stop() {
    await server('stop');
    state.remove();
  },
});
