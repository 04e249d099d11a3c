/**
 * `npm run audit -- [--account ID] [--from DATE] [--to DATE] [--csv FILE]`: replays the account
 * streams, compares every balance and reserved amount with the projected views, prints each
 * discrepancy, and exits 1 if there is any (2 on a usage error).
 */
import { writeFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { auditAccounts, auditCsv } from '../src/audit/audit.js';
import { argValue, openStores } from './stores.js';

const args = process.argv.slice(2);
const toIso = (name: string): string | undefined => {
  const v = argValue(args, name);
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) {
    process.stderr.write(`${name}: not a date: ${v}\n`);
    process.exit(2);
  }
  return new Date(t).toISOString();
};
const from = toIso('--from');
const to = toIso('--to');
const accountId = argValue(args, '--account');
const csv = argValue(args, '--csv');

const stores = await openStores();
const bar = new cliProgress.SingleBar(
  { format: 'audit |{bar}| {percentage}% | {value}/{total} positions', stream: process.stderr },
  cliProgress.Presets.shades_classic,
);
bar.start(Math.max(1, Number(await stores.events.headPosition())), 0);
const report = await auditAccounts(stores.events, stores.views, {
  ...(accountId ? { accountId } : {}),
  ...(from ? { from } : {}),
  ...(to ? { to } : {}),
  onProgress: (read) => bar.update(read),
});
bar.stop();
await stores.close();

if (csv) writeFileSync(csv, auditCsv(report));
process.stdout.write(`audited ${report.accounts.length} accounts, ${report.eventsRead} events\n`);
for (const d of report.discrepancies) process.stdout.write(`DISCREPANCY account ${d.accountId}: ${d.differences.join('; ')}\n`);
if (report.discrepancies.length === 0) process.stdout.write('no discrepancies\n');
process.exit(report.discrepancies.length > 0 ? 1 : 0);
