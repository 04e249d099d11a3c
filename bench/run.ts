/**
 * `npm run bench [-- --quick] [-- --out DIR]`: measures the gateway on the embedded default
 * beside a fastify hello-world baseline measured in the same run, and records the results in
 * bench/results/<date>.json and bench/README.md. `--quick` finishes in a minute or two (the test
 * suite runs it so the harness never rots) and writes nothing unless --out is given.
 * `--only poll,lifecycle,replay,memory,account,busy,hot-account,peer` runs just those scenarios (with the baseline, for
 * the ratios) at the chosen size and prints their raw figures as JSON, writing nothing: for
 * before/after comparisons while working on one figure.
 * `--sim out-of-process|in-process`: where the upstream simulator runs in the gateway scenarios.
 * Out of process (the default) it is a process of its own (src/simulator/main.ts) the gateway's
 * channels point at, so only the gateway's work is measured; in process it is mounted in the
 * gateway at `/_sim` as on the embedded default (how every run before 2026-11-25 measured).
 * `--store sqlite|postgres` (bench/stores.ts): the stores of the life-cycle scenario; `postgres` needs
 * POSTGRES_URL and puts the events and the views there (one process).
 * `peer` (bench/scenarios/peer.ts) measures LiteLLM beside the gateway in front of one stand-in
 * upstream; the quick run leaves LiteLLM out (its install and start alone take a minute).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { simulatorModeOf } from './gateway.js';
import { storeOf } from './stores.js';
import { machine, markdown, rows, type BenchResults } from './report.js';
import { accountLoad } from './scenarios/account-load.js';
import { baseline, pollAndSubmit } from './scenarios/http.js';
import { lifecycle } from './scenarios/lifecycle.js';
import { memory } from './scenarios/memory.js';
import { peerMarkdown } from './peer-report.js';
import { peer } from './scenarios/peer.js';
import { replay } from './scenarios/replay.js';
import { hotAccount } from './scenarios/hot-account.js';
import { submitInFlight } from './scenarios/submit-inflight.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const sim = simulatorModeOf(args);
const store = storeOf(args);
const outIndex = args.indexOf('--out');
const out = outIndex >= 0 ? args[outIndex + 1] : quick ? undefined : 'bench/results';

const size = quick
  ? // A check that the harness works (the test suite runs it): figures too short to compare.
    { seconds: 1, pool: 50, lifecycle: 300, events: 30_000, inflight: 1_000, settled: 20_000, submitInFlight: 300, peerSeconds: 1, idleWaitMs: 500 }
  : {
      seconds: 10,
      pool: 500,
      lifecycle: 20_000,
      events: 1_000_000,
      inflight: 100_000,
      settled: 1_000_000,
      submitInFlight: 10_000,
      peerSeconds: 10,
      idleWaitMs: 60_000,
    };
const onlyIndex = args.indexOf('--only');
const only = onlyIndex >= 0 ? new Set((args[onlyIndex + 1] ?? '').split(',')) : undefined;
const basePort = 4100 + Math.floor(Math.random() * 800);

function step(name: string): void {
  process.stderr.write(`[bench] ${name}…\n`);
}
const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);

if (only) {
  const partial: Record<string, unknown> = { simulator: sim, baseline: await baseline(basePort, size.seconds) };
  if (only.has('poll')) partial.pollAndSubmit = await pollAndSubmit(basePort + 1, size.seconds, size.pool, sim);
  if (only.has('lifecycle')) partial.lifecycle = await lifecycle(basePort + 2, size.lifecycle, sim, store);
  if (only.has('replay')) partial.replay = await replay(size.events);
  if (only.has('memory')) partial.memory = await memory(basePort + 3, size.inflight, sim);
  if (only.has('account')) partial.accountLoad = await accountLoad(size.settled);
  if (only.has('busy')) partial.submitInFlight = await submitInFlight(basePort + 4, size.submitInFlight, size.seconds, sim);
  if (only.has('hot-account')) partial.hotAccount = await hotAccount(basePort + 10, size.seconds, 16, sim);
  const peerResult = only.has('peer') ? await peer(basePort + 5, size.peerSeconds, !quick, say, size.idleWaitMs) : undefined;
  if (peerResult) partial.peer = peerResult;
  process.stdout.write(`${JSON.stringify(partial, null, 2)}\n`);
  // The figures as the report shows them, for a reader; stdout stays the JSON alone.
  if (peerResult) process.stderr.write(`\n${peerMarkdown(peerResult)}\n`);
  process.exit(0);
}

step('baseline');
const base = await baseline(basePort, size.seconds);
step('poll and submit');
const { poll, submit } = await pollAndSubmit(basePort + 1, size.seconds, size.pool, sim);
step(`life cycle of ${size.lifecycle} tasks`);
const life = await lifecycle(basePort + 2, size.lifecycle, sim, store);
step(`replay and rebuild over ${size.events} events`);
const rep = await replay(size.events);
step(`memory with ${size.inflight} tasks in flight`);
const mem = await memory(basePort + 3, size.inflight, sim);
step(`account load with ${size.settled} settled tasks`);
const acct = await accountLoad(size.settled);
step(`submit with ${size.submitInFlight} tasks in flight`);
const busy = await submitInFlight(basePort + 4, size.submitInFlight, size.seconds, sim);
step(quick ? 'peer (upstream and gateway; LiteLLM only in a full run)' : 'peer: LiteLLM and the gateway in front of one stand-in upstream');
const peerResult = await peer(basePort + 5, size.peerSeconds, !quick, say, size.idleWaitMs);

// What changes the figures, as the command line said it (not where they are written).
const commandFlags = [...(quick ? ['--quick'] : []), ...(args.includes('--sim') ? [`--sim ${sim}`] : [])];
const results: BenchResults = {
  date: new Date().toISOString(),
  command: `npm run bench${commandFlags.length > 0 ? ` -- ${commandFlags.join(' ')}` : ''}`,
  quick,
  simulator: sim,
  machine: machine(),
  baseline: base,
  poll,
  submit,
  lifecycle: life,
  replay: rep,
  memory: mem,
  accountLoad: acct,
  submitInFlight: busy,
  peer: peerResult,
};
results.figures = rows(results);

const table = markdown(results);
process.stdout.write(`${table}\n`);
if (out) {
  mkdirSync(out, { recursive: true });
  const file = join(out, `${results.date.slice(0, 19).replace(/[:T]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2));
  if (!quick) {
    const readme = 'bench/README.md';
    const marker = '<!-- results -->';
    const current = readFileSync(readme, 'utf8');
    writeFileSync(readme, current.replace(marker, `${marker}\n\n${table}`));
  }
  process.stderr.write(`[bench] results written to ${file}\n`);
}
