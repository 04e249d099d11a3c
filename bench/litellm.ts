/**
 * LiteLLM, the proxy users would pick instead of this gateway, for the peer scenario
 * (bench/scenarios/peer.ts): a pinned `litellm[proxy]` from PyPI in a venv of its own
 * (.tmp/bench-litellm-venv, reused while it holds that version on that interpreter), and the
 * proxy started on a generated config with no database, as `litellm --config` documents it.
 * The interpreter is chosen as scripts/schemathesis.sh chooses it: pyenv's newest 3.13, else
 * 3.12, else python3 (`BENCH_LITELLM_PYTHON` overrides).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const LITELLM_VERSION = '1.108.7';
const VENV = resolve('.tmp/bench-litellm-venv');
const LOG_DIR = resolve('.tmp');

export type LitellmInstall = { bin: string; version: string; python: string } | { skipped: string };

function pyenvPython(): string | undefined {
  const versions = join(process.env.PYENV_ROOT ?? join(homedir(), '.pyenv'), 'versions');
  if (!existsSync(versions)) return undefined;
  const installed = readdirSync(versions);
  for (const minor of ['3.13', '3.12']) {
    const newest = installed
      .filter((v) => v.startsWith(`${minor}.`) && existsSync(join(versions, v, 'bin/python3')))
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
      .at(-1);
    if (newest) return join(versions, newest, 'bin/python3');
  }
  return undefined;
}

/** `Python 3.13.0` of an interpreter, or undefined when there is none. */
function pythonVersion(python: string): string | undefined {
  const r = spawnSync(python, ['-c', 'import sys; print(sys.version.split()[0])'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The venv with `litellm[proxy]==LITELLM_VERSION`, installed when missing; a reason when it cannot be. */
export function ensureLitellm(log: (line: string) => void): LitellmInstall {
  const python = process.env.BENCH_LITELLM_PYTHON ?? pyenvPython() ?? 'python3';
  const version = pythonVersion(python);
  if (!version) return { skipped: `no Python interpreter (${python}); set BENCH_LITELLM_PYTHON` };
  const wanted = `litellm[proxy]==${LITELLM_VERSION} on Python ${version}`;
  const bin = join(VENV, 'bin/litellm');
  const marker = join(VENV, '.installed');
  if (existsSync(bin) && existsSync(marker) && readFileSync(marker, 'utf8') === wanted) {
    log(`using ${wanted} in ${VENV}`);
    return { bin, version: LITELLM_VERSION, python: version };
  }
  log(`installing ${wanted} from PyPI into ${VENV} (a minute or two, once) …`);
  rmSync(VENV, { recursive: true, force: true });
  const venv = spawnSync(python, ['-m', 'venv', VENV], { encoding: 'utf8' });
  if (venv.status !== 0) return { skipped: `python -m venv failed: ${lastLine(venv.stderr)}` };
  const pip = spawnSync(join(VENV, 'bin/pip'), ['install', '--quiet', '--disable-pip-version-check', `litellm[proxy]==${LITELLM_VERSION}`], {
    encoding: 'utf8',
    timeout: 20 * 60_000,
  });
  if (pip.status !== 0 || !existsSync(bin)) {
    // A half-made venv would be taken for a good one next time: it goes.
    rmSync(VENV, { recursive: true, force: true });
    return { skipped: `pip could not install litellm[proxy]==${LITELLM_VERSION} (PyPI unreachable?): ${lastLine(pip.stderr)}` };
  }
  writeFileSync(marker, wanted);
  log(`installed ${wanted}`);
  return { bin, version: LITELLM_VERSION, python: version };
}

function lastLine(text: string | undefined): string {
  return (text ?? '').trim().split('\n').at(-1) ?? '';
}

export interface LitellmProxy {
  url: string;
  pid: number;
  masterKey: string;
  stop(): Promise<void>;
}

/**
 * The proxy's config: each model routed to `upstreamUrl` as an OpenAI-compatible provider
 * (`openai/<name>` with `api_base`), priced so LiteLLM tracks spend as it would for a real
 * model (without a price it warns on every video request). `drop_params`: LiteLLM takes an
 * unknown OpenAI image model for a gpt-image one and refuses `response_format` otherwise; the
 * gateway does not forward it either (the stand-in answers b64_json regardless). JSON, which
 * is YAML: no YAML writer needed.
 */
function config(upstreamUrl: string, masterKey: string): string {
  const upstream = { api_base: `${upstreamUrl}/v1`, api_key: 'bench-upstream-key' };
  return JSON.stringify(
    {
      model_list: [
        {
          model_name: 'std-image',
          litellm_params: { model: 'openai/std-image', ...upstream },
          model_info: { mode: 'image_generation', output_cost_per_image: 0.02 },
        },
        {
          model_name: 'Vid-H3',
          litellm_params: { model: 'openai/Vid-H3', ...upstream },
          model_info: { mode: 'video_generation', output_cost_per_video_per_second: 0.05 },
        },
      ],
      litellm_settings: { drop_params: true },
      general_settings: { master_key: masterKey },
    },
    null,
    2,
  );
}

/** Starts `litellm --config` on `port` with `workers` uvicorn workers; resolves once it answers. */
export async function startLitellm(bin: string, port: number, workers: number, upstreamUrl: string): Promise<LitellmProxy> {
  mkdirSync(LOG_DIR, { recursive: true });
  const masterKey = `sk-bench-${randomBytes(12).toString('hex')}`;
  const file = join(LOG_DIR, `bench-litellm-${workers}w.yaml`);
  writeFileSync(file, config(upstreamUrl, masterKey));
  const logFile = join(LOG_DIR, `bench-litellm-${workers}w.log`);
  const out = openSync(logFile, 'w');
  const child = spawn(bin, ['--config', file, '--host', '127.0.0.1', '--port', String(port), '--num_workers', String(workers)], {
    // Its own process group: the workers stop with their supervisor.
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      // The cost map shipped in the package, not fetched from GitHub at start: no network in the run.
      LITELLM_LOCAL_MODEL_COST_MAP: 'True',
      // Warnings only, as the gateway runs (LOG_LEVEL=warn): no access log line per request.
      LITELLM_LOG: 'WARNING',
      LITELLM_DONT_SHOW_FEEDBACK_BOX: 'true',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`litellm exited with ${child.exitCode}; see ${logFile}`);
    try {
      if ((await fetch(`${url}/health/liveliness`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stopGroup(child);
      throw new Error(`litellm did not start within 180 s; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    pid: child.pid!,
    masterKey,
    stop: () => stopGroup(child),
  };
}

/** SIGTERM to the proxy's process group, SIGKILL to what is left of it after 20 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const group = -child.pid!;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(group, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (alive()) process.kill(group, 'SIGKILL');
}
