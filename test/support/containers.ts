/**
 * Real backends for the distributed adapters' contract suites. A suite runs against:
 * 1. the server named by its URL variable (EVENTSTORE_URL, MONGO_URL, KAFKA_BROKERS, POSTGRES_URL), if set;
 * 2. otherwise a throw-away container (testcontainers, GenericContainer for every image), when
 *    global-setup.ts found a Docker engine (GATEWAY_TEST_DOCKER=1);
 * 3. otherwise it is skipped, with its title saying why and ONE warning line in the output.
 * REQUIRE_DOCKER=1 makes global-setup fail instead of letting suites skip (REQUIRE_KAFKA=1 and
 * REQUIRE_POSTGRES=1: those suites alone).
 * MONGO_STANDIN=ferretdb says MONGO_URL is FerretDB, not MongoDB (scripts/ferretdb-local.sh):
 * suite titles say so, and cases that differ on it skip by name, with the reason (standinDifference).
 *
 * testcontainers is imported lazily, so a skipped suite never loads it.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll } from 'vitest';

export type BackendKind = 'eventstore' | 'mongo' | 'kafka' | 'postgres';

export interface RunningBackend {
  /** Connection string (esdb://…, mongodb://…) or broker list (host:port,…). */
  url: string;
  /** Where it came from, for titles and messages. */
  source: 'url' | 'container';
  stop(): Promise<void>;
}

export interface ContractTarget {
  available: boolean;
  /** describe() title: names the backend and where it comes from, or exactly why it is skipped. */
  title: string;
  start(): Promise<RunningBackend>;
}

/** Container start-up can include an image pull. */
export const BACKEND_STARTUP_TIMEOUT_MS = 300_000;

const BACKENDS: Record<BackendKind, { envVar: string; start: () => Promise<RunningBackend> }> = {
  eventstore: { envVar: 'EVENTSTORE_URL', start: startEventStore },
  mongo: { envVar: 'MONGO_URL', start: startMongo },
  kafka: { envVar: 'KAFKA_BROKERS', start: startKafka },
  postgres: { envVar: 'POSTGRES_URL', start: startPostgres },
};

/**
 * Decides how a contract suite gets its backend. `suite` names the suite in titles and in the
 * skip line, e.g. `[contract] EventStoreDB suite skipped: no Docker engine and EVENTSTORE_URL not set`.
 */
export function contractTarget(kind: BackendKind, suite: string): ContractTarget {
  const { envVar, start } = BACKENDS[kind];
  const url = process.env[envVar]?.trim();
  if (url) {
    const standin = kind === 'mongo' ? mongoStandin() : undefined;
    return {
      available: true,
      title: `${suite} against ${envVar}${standin ? ` (stand-in: ${standin}, not MongoDB)` : ''}`,
      start: async () => ({ url, source: 'url', stop: async () => undefined }),
    };
  }
  if (process.env.GATEWAY_TEST_DOCKER === '1') {
    return { available: true, title: `${suite} in a container (testcontainers)`, start };
  }
  const reason = `no Docker engine and ${envVar} not set`;
  console.warn(`[contract] ${suite} suite skipped: ${reason}`);
  return {
    available: false,
    title: `${suite} suite skipped: ${reason}`,
    start: () => Promise.reject(new Error(`${suite}: ${reason}`)),
  };
}

/**
 * The backend of a suite, started before its tests and stopped after them (call inside the
 * suite's describe): the function returned gives its URL. `beforeStop` clears what the suite
 * left on a shared server (a MongoDB database) while it still answers.
 */
export function useBackend(target: ContractTarget, name: string, beforeStop?: (url: string) => Promise<void>): () => string {
  let backend: RunningBackend | undefined;
  beforeAll(async () => {
    backend = await target.start();
  }, BACKEND_STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    if (backend && beforeStop) await beforeStop(backend.url);
    await backend?.stop();
  });
  return () => {
    if (!backend) throw new Error(`${name} did not start`);
    return backend.url;
  };
}

/** The MongoDB stand-in MONGO_URL points at, if MONGO_STANDIN names one (a container is MongoDB). */
function mongoStandin(): string | undefined {
  const standin = process.env.MONGO_STANDIN?.trim().toLowerCase();
  return standin && process.env.MONGO_URL?.trim() ? standin : undefined;
}

/**
 * A case that fails on a MongoDB stand-in because the stand-in differs from MongoDB there (a
 * documented difference, named in `reason`): skipped only when MONGO_STANDIN is `standin`, and
 * then never silently: the title carries the reason and one warning line is printed.
 */
export function standinDifference(standin: string, title: string, reason: string): { skip: boolean; title: string } {
  if (mongoStandin() !== standin) return { skip: false, title };
  console.warn(`[contract] skipped on ${standin}: ${title}: ${reason}`);
  return { skip: true, title: `${title} (skipped on ${standin}: ${reason})` };
}

async function startEventStore(): Promise<RunningBackend> {
  const { GenericContainer, Wait } = await import('testcontainers');
  // EventStoreDB 24.10, insecure single node, in memory. KurrentDB works too (EVENTSTORE_IMAGE),
  // it still reads the EVENTSTORE_ settings.
  const container = await new GenericContainer(process.env.EVENTSTORE_IMAGE ?? 'eventstore/eventstore:24.10')
    .withEnvironment({
      EVENTSTORE_INSECURE: 'true',
      EVENTSTORE_CLUSTER_SIZE: '1',
      EVENTSTORE_RUN_PROJECTIONS: 'None',
      EVENTSTORE_MEM_DB: 'true',
    })
    .withExposedPorts(2113)
    .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCodeMatching((code) => code === 200 || code === 204))
    .withStartupTimeout(BACKEND_STARTUP_TIMEOUT_MS)
    .start();
  const url = `esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`;
  // Live is not yet leader: wait until a write goes through (one event in a probe stream that
  // no contract test reads, since they all use unique stream prefixes).
  const { createEsdbEventStore } = await import('../../src/adapters/esdb/event-store.js');
  const probe = createEsdbEventStore({ connectionString: url });
  try {
    await waitUntil('EventStoreDB to accept writes', 60_000, async () => {
      await probe.append('contract-probe', [{ id: randomUUID(), type: 'Probed', data: {}, metadata: { at: new Date().toISOString() } }]);
      return true;
    });
  } finally {
    await probe.close();
  }
  return { url, source: 'container', stop: async () => void (await container.stop()) };
}

async function startMongo(): Promise<RunningBackend> {
  const { GenericContainer, Wait } = await import('testcontainers');
  // A single-node replica set (change streams and transactions need one), reached with
  // directConnection=true so the client does not look for the member's advertised host.
  const container = await new GenericContainer(process.env.MONGO_IMAGE ?? 'mongo:7')
    .withCommand(['--replSet', 'rs0', '--bind_ip_all'])
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
    .withStartupTimeout(BACKEND_STARTUP_TIMEOUT_MS)
    .start();
  const initiate = await container.exec([
    'mongosh',
    '--quiet',
    '--eval',
    "try { rs.status().ok } catch (e) { rs.initiate({ _id: 'rs0', members: [{ _id: 0, host: '127.0.0.1:27017' }] }).ok }",
  ]);
  if (initiate.exitCode !== 0) throw new Error(`rs.initiate failed: ${initiate.output}`);
  await waitUntil('the replica set to elect a primary', 60_000, async () => {
    const hello = await container.exec(['mongosh', '--quiet', '--eval', 'db.hello().isWritablePrimary']);
    return hello.exitCode === 0 && hello.stdout.includes('true');
  });
  const url = `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/?directConnection=true`;
  return { url, source: 'container', stop: async () => void (await container.stop()) };
}

async function startKafka(): Promise<RunningBackend> {
  const { GenericContainer, Wait } = await import('testcontainers');
  // Kafka must advertise the address clients reach it at, which is only known once a container
  // port is mapped; binding a free host port to the same container port avoids the two-phase
  // start: the listener and its advertised address use that one port number.
  const port = await freePort();
  const host = process.env.TESTCONTAINERS_HOST_OVERRIDE ?? 'localhost';
  const container = await new GenericContainer(process.env.KAFKA_IMAGE ?? 'apache/kafka:3.8.1')
    .withExposedPorts({ container: port, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${port},BROKER://0.0.0.0:9094,CONTROLLER://0.0.0.0:9093`,
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${port},BROKER://localhost:9094`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(BACKEND_STARTUP_TIMEOUT_MS)
    .start();
  return { url: `${host}:${port}`, source: 'container', stop: async () => void (await container.stop()) };
}

async function startPostgres(): Promise<RunningBackend> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(process.env.POSTGRES_IMAGE ?? 'postgres:15')
    .withEnvironment({ POSTGRES_USER: 'gateway', POSTGRES_DB: 'gateway', POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    // The image's entrypoint starts the server twice (once to initialise): the second "ready" is the real one.
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .withStartupTimeout(BACKEND_STARTUP_TIMEOUT_MS)
    .start();
  const url = `postgres://gateway@${container.getHost()}:${container.getMappedPort(5432)}/gateway`;
  return { url, source: 'container', stop: async () => void (await container.stop()) };
}

/** Drops a database the suite created on a MongoDB server (shared servers stay clean). */
export async function dropMongoDatabase(url: string, dbName: string): Promise<void> {
  const client = new MongoClient(url);
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
}

async function waitUntil(what: string, timeoutMs: number, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}
