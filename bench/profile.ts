/**
 * Where a gateway's time goes under one workload: `npm run bench:profile -- submit|lifecycle|poll|image`
 * (`image`: the synchronous `POST /v1/images/generations` with `b64_json` at 32 connections, as
 * the peer figure calls it, against the simulator).
 * Starts the gateway as the bench does (simulator in a process of its own) with `--cpu-prof`,
 * runs the workload, stops it, and prints the share of samples per owner: the innermost frame of
 * the gateway's own code (src/, projections/) on each sampled stack, so time inside SQLite,
 * fastify or undici counts against the module that called it; stacks without any are named by
 * their package or as Node internals, garbage collection or idle. `--top N` also lists the N
 * functions with the most self time. Nothing is written but the profile (in a temp directory).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tempDir } from '../test/support/tmp.js';
import { adminCookie, fundedKey, pool } from './client.js';
import { startGateway } from './gateway.js';
import { roleOf } from '../test/support/supervised.js';
import { treePids } from './proc-stats.js';
import { load } from './load.js';
import { ADMIN_PASSWORD, gatewayEnv, submitBody } from './scenarios/http.js';
import { untilEveryTaskEnded } from './scenarios/lifecycle.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const WORKLOADS = ['submit', 'lifecycle', 'poll', 'image'] as const;
const IMAGE_BODY = JSON.stringify({ model: 'std-image', prompt: 'bench', size: '1024x1024', response_format: 'b64_json' });
type Workload = (typeof WORKLOADS)[number];

const args = process.argv.slice(2);
const workload = WORKLOADS.find((w) => w === args[0]);
if (!workload) throw new Error(`usage: npm run bench:profile -- ${WORKLOADS.join('|')} [--top N]`);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 0;

const root = process.cwd();

async function run(kind: Workload, url: string, key: string): Promise<string> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const submit = async () => {
    const r = await fetch(`${url}/v1/images/async/generations`, { method: 'POST', headers, body: submitBody });
    return ((await r.json()) as { id: string }).id;
  };
  if (kind === 'submit') {
    const r = await load({ url: `${url}/v1/images/async/generations`, seconds: 10, method: 'POST', headers, body: submitBody });
    return `${r.requestsPerSecond} req/s, p99 ${r.p99Ms} ms`;
  }
  if (kind === 'image') {
    const r = await load({ url: `${url}/v1/images/generations`, seconds: 10, method: 'POST', headers, body: IMAGE_BODY, connections: 32 });
    return `${r.requestsPerSecond} req/s, p99 ${r.p99Ms} ms, non-2xx ${r.non2xx}`;
  }
  if (kind === 'poll') {
    const ids = await pool(200, 16, submit);
    await new Promise((r) => setTimeout(r, 3000));
    let i = 0;
    const r = await load({
      url: `${url}/v1/images/async/generations/${ids[0]}`,
      seconds: 10,
      headers,
      nextPath: () => `/v1/images/async/generations/${ids[i++ % ids.length]}`,
    });
    return `${r.requestsPerSecond} req/s, p99 ${r.p99Ms} ms`;
  }
  const tasks = 3000;
  const cookie = await adminCookie(url, ADMIN_PASSWORD);
  const started = Date.now();
  await pool(tasks, 64, submit);
  await untilEveryTaskEnded(url, cookie, tasks, started);
  return `${tasks} tasks in ${((Date.now() - started) / 1000).toFixed(1)} s`;
}

/** The owner of a sampled stack (see the header), walking from the leaf towards the root. */
function ownerOf(node: ProfileNode, parent: Map<number, ProfileNode>): string {
  const { functionName } = node.callFrame;
  if (functionName === '(garbage collector)' || functionName === '(idle)' || functionName === '(program)') return functionName;
  let pkg: string | undefined;
  for (let n: ProfileNode | undefined = node; n; n = parent.get(n.id)) {
    const path = n.callFrame.url.startsWith('file://') ? n.callFrame.url.slice('file://'.length) : n.callFrame.url;
    // The compiled gateway npm start runs (dist/src/x.js) is named by its source (src/x.ts).
    const own = relative(root, path)
      .replace(/^dist\//, '')
      .replace(/\.js$/, '.ts');
    if (/^(src|projections)\//.test(own)) return own;
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (match && !pkg) pkg = `package ${match[1]}`;
  }
  return pkg ?? 'node internals';
}

function summarise(profile: CpuProfile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const owners = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const micros = profile.timeDeltas[i] ?? 0;
    total += micros;
    const owner = ownerOf(node, parent);
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${relative(root, url.replace('file://', ''))}:${lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + micros);
  });
  const share = (micros: number) => `${((100 * micros) / total).toFixed(1).padStart(5)} %`;
  console.log(`${(total / 1e6).toFixed(1)} s of samples`);
  for (const [owner, micros] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${share(micros)}  ${owner}`);
  if (top > 0) {
    console.log(`\ntop ${top} by self time`);
    for (const [name, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(micros)}  ${name}`);
  }
}

const data = tempDir('gateway-profile-');
const profiles = tempDir('gateway-cpuprofile-');
const gw = await startGateway(
  4100,
  gatewayEnv(data.path, workload === 'submit' ? { SIM_STEP_MS: '3600000', POLL_INTERVAL_MS: '600000' } : {}),
  'out-of-process',
  ['--cpu-prof', `--cpu-prof-dir=${profiles.path}`],
);
let outcome: string;
// With two processes (PROCESSES=2, the default on two cores) each writes its own profile: which
// is which is read from their environment while they run.
const roles = new Map<number, string>();
try {
  const key = await fundedKey(gw.url, ADMIN_PASSWORD, 1e14);
  for (const pid of treePids(gw.pid)) roles.set(pid, roleOf(pid));
  outcome = await run(workload, gw.url, key);
} finally {
  await gw.stop();
}
const files = readdirSync(profiles.path).filter((f) => f.endsWith('.cpuprofile'));
if (files.length === 0) throw new Error('the gateway wrote no profile');
console.log(`${workload}: ${outcome}`);
for (const file of files) {
  // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile
  const pid = Number(file.split('.')[3]);
  console.log(`\n${roles.get(pid) ?? 'process'} (pid ${pid})`);
  summarise(JSON.parse(readFileSync(join(profiles.path, file), 'utf8')) as CpuProfile);
}
data.remove();
profiles.remove();
