/**
 * `npm run projections:rebuild -- [--view NAME]`: drops the views (all, or one) and folds every
 * event into them again, with a progress bar. Run it with the gateway stopped.
 */
import cliProgress from 'cli-progress';
import { pino } from 'pino';
import { rebuildViews } from '../src/audit/rebuild.js';
import { familyProjections } from '../src/families/index.js';
import { coreProjections } from '../projections/index.js';
import { argValue, openStores } from './stores.js';

const all = [...coreProjections, ...familyProjections];
const view = argValue(process.argv.slice(2), '--view');
const chosen = view ? all.filter((p) => p.view === view) : all;
if (chosen.length === 0) {
  process.stderr.write(`--view: no view ${view}; views: ${all.map((p) => p.view).join(', ')}\n`);
  process.exit(2);
}
const stores = await openStores();
const bar = new cliProgress.SingleBar(
  { format: 'rebuild |{bar}| {percentage}% | {value}/{total} positions', stream: process.stderr },
  cliProgress.Presets.shades_classic,
);
bar.start(Math.max(1, Number(await stores.events.headPosition())), 0);
const result = await rebuildViews({ events: stores.events, views: stores.views, log: pino({ level: 'warn' }) }, chosen, (position) => bar.update(position));
bar.stop();
await stores.close();
process.stdout.write(`rebuilt ${chosen.map((p) => p.view).join(', ')} from ${result.events} events in ${result.seconds.toFixed(1)} s\n`);
