/**
 * A Dockerfile read into stages of instructions, enough for tests to check what an image does
 * without a Docker engine: comments dropped, `\` continuations joined, stages split at FROM.
 * Not a full parser (no heredocs, no `# escape=` directive): this repository's Dockerfile uses
 * neither.
 */
import { readFileSync } from 'node:fs';

export interface Instruction {
  /** Upper-cased keyword: FROM, RUN, COPY, ENV, USER, CMD, … */
  keyword: string;
  /** Everything after the keyword, continuations joined by one space. */
  args: string;
}

export interface Stage {
  /** The image the stage starts from, as written (build arguments not substituted). */
  from: string;
  /** `FROM … AS name`, lower-cased; undefined for an unnamed stage. */
  name: string | undefined;
  instructions: Instruction[];
}

export function readDockerfile(path: string): Stage[] {
  const stages: Stage[] = [];
  for (const { keyword, args } of instructionsOf(readFileSync(path, 'utf8'))) {
    if (keyword === 'FROM') {
      const [, from = '', name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({ from, name: name?.toLowerCase(), instructions: [] });
    } else {
      // ARG before the first FROM belongs to no stage (it only parameterizes FROM lines).
      stages.at(-1)?.instructions.push({ keyword, args });
    }
  }
  return stages;
}

function instructionsOf(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    // Docker drops comment lines even between the lines of one continued instruction.
    if (line === '' || line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const whole = pending + line;
    pending = '';
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(whole) ?? [];
    instructions.push({ keyword: keyword.toUpperCase(), args });
  }
  return instructions;
}

/** The exec form of CMD / ENTRYPOINT / HEALTHCHECK CMD (a JSON array), or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((e) => typeof e === 'string') ? parsed : undefined;
}

/** The variables a stage's ENV lines set (`KEY=value` pairs; quotes around a value removed). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter((i) => i.keyword === 'ENV')) {
    for (const [, key = '', value = ''] of args.matchAll(/(\w+)=("[^"]*"|'[^']*'|\S*)/g)) env[key] = value.replace(/^(["'])(.*)\1$/, '$2');
  }
  return env;
}

/** The last instruction of a kind in a stage (the one that takes effect), if any. */
export function lastOf(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1);
}
