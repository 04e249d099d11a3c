/** Runs a TypeScript script of the repository as a process of its own (node + tsx): its stdout once it exits 0, else a rejection with its exit code and stderr. */
import { spawn } from 'node:child_process';

export function runScript(script: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} ${args.join(' ')} exited with ${code}: ${err}`))));
  });
}
