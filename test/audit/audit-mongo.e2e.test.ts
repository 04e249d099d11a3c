/**
 * The audit and the rebuild with the views in MongoDB (MONGO_URL; FerretDB in CI, see .ci/run)
 * and the events in SQLite: see audit-tools.scenario.ts.
 */
import { randomUUID } from 'node:crypto';
import { describe } from 'vitest';
import { dropMongoDatabase } from '../support/containers.js';
import { auditToolsScenario } from './audit-tools.scenario.js';

const mongoUrl = process.env.MONGO_URL?.trim();
if (!mongoUrl) {
  if (process.env.MONGO_STANDIN) throw new Error('MONGO_STANDIN is set but MONGO_URL is not: the tools cannot be tried against MongoDB');
  console.warn('[audit] tools-against-MongoDB suite skipped: MONGO_URL not set');
}

/** MONGO_URL with a database of this run's own (the path of a MongoDB connection string). */
function withDatabase(url: string, db: string): string {
  const [base, query] = url.split('?') as [string, string | undefined];
  const host = base.replace(/^(mongodb(?:\+srv)?:\/\/[^/]*).*$/, '$1');
  return `${host}/${db}${query ? `?${query}` : ''}`;
}

describe.skipIf(!mongoUrl)('the views in MongoDB', () => {
  auditToolsScenario('the views in MongoDB', async () => {
    const dbName = `audit_${randomUUID().slice(0, 8)}`;
    const MONGO_URL = withDatabase(mongoUrl!, dbName);
    return {
      env: { MONGO_URL },
      storesLine: /^events: SQLite .*events\.sqlite; views: MongoDB database audit_\w+ at mongodb:\/\//,
      cleanup: () => dropMongoDatabase(MONGO_URL, dbName),
    };
  });
});
