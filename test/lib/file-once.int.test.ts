import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';

const run = promisify(execFile);

describe('a file made once by racing processes (the secrets generated into DATA_DIR)', () => {
  it('8 processes at once: one makes it, every one reads the same whole content, no temporary file is left', async () => {
    const dir = tempDir('file-once-');
    try {
      const path = join(dir.path, 'secret');
      // Each process spins until a shared start time, then makes-or-reads the file and prints what it read.
      const startAt = Date.now() + 1500;
      const script = `
        import { createFileOnce } from './src/lib/file-once.ts';
        import { readFileSync } from 'node:fs';
        import { randomBytes } from 'node:crypto';
        while (Date.now() < ${startAt});
        const made = createFileOnce(${JSON.stringify(path)}, randomBytes(32).toString('hex') + '\\n', 0o600);
        console.log(JSON.stringify({ made, content: readFileSync(${JSON.stringify(path)}, 'utf8') }));`;
      const outputs = await Promise.all(Array.from({ length: 8 }, () => run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])));
      const results = outputs.map(({ stdout }) => JSON.parse(stdout.trim()) as { made: boolean; content: string });
      expect(results.filter((r) => r.made)).toHaveLength(1);
      expect(new Set(results.map((r) => r.content)).size).toBe(1);
      expect(results[0]!.content).toMatch(/^[0-9a-f]{64}\n$/);
      expect(readdirSync(dir.path)).toEqual(['secret']);
    } finally {
      dir.remove();
    }
  }, 60_000);
});
