/**
 * `npm run audit -- [--account ID] [--from DATE] [--to DATE] [--csv FILE]`: replays the account
 * streams, compares every balance and reserved amount with the projected views, and (without
 * `--account`) replays the user streams against the users view (status, group, role, password);
 * prints each discrepancy, and exits 1 if there is any (2 on a usage error).
 */
import { writeFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { auditAccounts, auditCsv } from '../src/audit/audit.js';
import { auditUsers } from '../src/audit/users.js';
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
const users = accountId ? undefined : await auditUsers(stores.events, stores.views);
await stores.close();

if (csv) writeFileSync(csv, auditCsv(report));
process.stdout.write(`audited ${report.accounts.length} accounts, ${report.eventsRead} events\n`);
for (const d of report.discrepancies) process.stdout.write(`DISCREPANCY account ${d.accountId}: ${d.differences.join('; ')}\n`);
if (users) {
  process.stdout.write(`audited ${users.users} users\n`);
  for (const d of users.discrepancies) process.stdout.write(`DISCREPANCY user ${d.userId}: ${d.differences.join('; ')}\n`);
}
const found = report.discrepancies.length + (users?.discrepancies.length ?? 0);
if (found === 0) process.stdout.write('no discrepancies\n');
process.exit(found > 0 ? 1 : 0);
