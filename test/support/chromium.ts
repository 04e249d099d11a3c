/**
 * The browser of the browser tests: Debian's chromium, driven by playwright-core. Required, never
 * skipped: CHROMIUM_PATH, else `chromium` on the PATH (CI installs it: .ci/run).
 */
import { spawnSync } from 'node:child_process';

export function chromiumPath(): string {
  const given = process.env.CHROMIUM_PATH?.trim();
  if (given) return given;
  const found = spawnSync('which', ['chromium'], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error('chromium not found: install it (apt-get install chromium) or set CHROMIUM_PATH');
  return found;
}
