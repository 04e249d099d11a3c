/**
 * Live subscriptions wake on other processes' commits through LISTEN: one connection per store,
 * opened with the first subscription, kept apart from the pool (a listening connection must
 * stay open). Should it drop, subscriptions still poll, and it is opened again after a pause.
 */
import pg from 'pg';
import type { ChangeNotifier } from '../change-notifier.js';
import { applicationName } from './database.js';
import { EVENTS_CHANNEL } from './event-rows.js';

const REOPEN_AFTER_MS = 1000;

export interface CommitListener {
  /** Opens the listening connection if it is not open. */
  start(): void;
  close(): Promise<void>;
}

export function createCommitListener(url: string, schema: string, notifier: ChangeNotifier): CommitListener {
  let client: pg.Client | undefined;
  let reopen: NodeJS.Timeout | undefined;
  let closed = false;

  function dropped(dead: pg.Client): void {
    if (client !== dead) return;
    client = undefined;
    dead.end().catch(() => undefined);
    // Whatever was committed while it was down is found by the poll; wake the readers now too.
    notifier.notify();
    if (!closed) reopen ??= setTimeout(() => ((reopen = undefined), start()), REOPEN_AFTER_MS);
  }

  function start(): void {
    if (client || closed) return;
    const opened = new pg.Client({ connectionString: url, application_name: applicationName(schema) });
    client = opened;
    opened.on('notification', (message) => {
      if (message.channel === EVENTS_CHANNEL && message.payload === schema) notifier.notify();
    });
    opened.on('error', () => dropped(opened));
    opened.on('end', () => dropped(opened));
    opened
      .connect()
      .then(() => opened.query(`LISTEN ${EVENTS_CHANNEL}`))
      .catch(() => dropped(opened));
  }

  return {
    start,
    async close() {
      closed = true;
      clearTimeout(reopen);
      const open = client;
      client = undefined;
      await open?.end().catch(() => undefined);
    },
  };
}
