/** Configuration from the environment; every value has a default that runs on one machine. */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { CHANNEL_KEYS_SECRET_FORMAT, parseChannelKeysSecret } from './config/channel-keys-secret.js';
import { parseAllowedDestinations } from './config/allowed-destinations.js';
import { DEFAULT_SCHEMA, SCHEMA_NAME } from './config/postgres-schema.js';

const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
/** A limit: a whole number, 0 for none (the default). */
const count = () =>
  z.coerce
    .number({ error: 'must be a whole number (0: no limit)' })
    .int('must be a whole number (0: no limit)')
    .min(0, 'must be 0 (no limit) or more')
    .default(0);

/** proxy-addr's names for address ranges, accepted in a TRUST_PROXY list. */
const proxyRangeNames = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (proxyRangeNames.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** fastify's `trustProxy`: off, every hop (`true`), a hop count, or the proxies' addresses / CIDRs. */
const trustProxy = z
  .string()
  .trim()
  .default('false')
  .transform((v, ctx): boolean | number | readonly string[] => {
    if (v === '' || v === 'false') return false;
    if (v === 'true') return true;
    if (/^\d+$/.test(v)) return Number(v) === 0 ? false : Number(v);
    const list = v
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const bad = list.find((e) => !isProxyAddress(e));
    if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `${bad} is not true, false, a hop count, an address or a CIDR range` });
    return list;
  });

const Env = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATA_DIR: z.string().default('./data'),
  /** Base URL clients reach the gateway at; asset URLs are signed on it. Default: http://HOST:PORT; required for ROLE=worker. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  ADMIN_USERNAME: z.string().min(1).default('admin'),
  ADMIN_PASSWORD: z.string().min(8).max(128).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Seeds channels and prices on an empty store (JSON, see docs/bootstrap.md). */
  BOOTSTRAP_FILE: z.string().optional(),
  /**
   * Mount the built-in upstream simulator at /_sim (and seed its channels on an empty store without
   * BOOTSTRAP_FILE): `1`, `0`, or `auto` (the default): mounted unless NODE_ENV=production or a real
   * channel is configured (src/bootstrap/simulator-mount.ts, docs/decisions/0140-simulator-off-by-default-and-limited.md).
   */
  SIMULATOR: z
    .enum(['0', '1', 'true', 'false', 'auto'])
    .default('auto')
    .transform((v): boolean | 'auto' => (v === 'auto' ? 'auto' : v === '1' || v === 'true')),
  /** `production` turns the simulator's `auto` off. */
  NODE_ENV: z.string().optional(),
  ASSET_RETENTION_SECONDS: z.coerce.number().int().min(1).default(7200),
  /** Grace period after which a reservation whose task never appeared is released. */
  RESERVATION_GRACE_SECONDS: z.coerce.number().int().min(1).default(300),
  SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(7 * 24 * 3600),
  /** Lets outbound fetches and callbacks reach loopback (tests, the local simulator). */
  ALLOW_LOOPBACK_OUTBOUND: bool.default(false),
  /**
   * What an answer that does not match its route's declared response schema does: `log` (default:
   * sent as produced, logged as an error) or `strict` (a 500, for tests that hold the schemas true).
   */
  RESPONSE_SCHEMAS: z.enum(['log', 'strict']).default('log'),
  /**
   * Callback destinations that are not public but allowed (receivers inside the deployment):
   * comma-separated IP addresses, CIDR ranges and exact host names.
   */
  CALLBACK_ALLOWED_DESTINATIONS: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseAllowedDestinations(text.split(','));
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
        return z.NEVER;
      }
    }),
  EVENTSTORE_URL: z.string().optional(),
  MONGO_URL: z.string().optional(),
  /**
   * PostgreSQL for the events (unless EVENTSTORE_URL is set) and the views (unless MONGO_URL is
   * set), in the schema POSTGRES_SCHEMA (created when missing).
   */
  POSTGRES_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// connection string')
    .optional(),
  POSTGRES_SCHEMA: z.string().regex(SCHEMA_NAME, 'must be a lower-case SQL identifier (letters, digits, _; at most 63)').default(DEFAULT_SCHEMA),
  KAFKA_BROKERS: z.string().optional(),
  /**
   * Put before every Kafka topic and consumer-group name this deployment uses, so two
   * deployments (or test suites) on one broker never share a topic or a group; envelopes keep
   * the plain topic name. The same on every instance of one deployment.
   */
  KAFKA_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]{0,100}$/, 'at most 100 of [A-Za-z0-9._-] (it starts Kafka topic names)')
    .default(''),
  /**
   * `engine`: the engine and the projections without the API, the second of the embedded
   * default's two processes (PROCESSES=2); the supervisor starts it (src/supervisor.ts).
   */
  ROLE: z.enum(['all', 'api', 'worker', 'projector', 'engine']).default('all'),
  /**
   * The embedded default in one process (1) or two (2): the HTTP API in one, the engine and the
   * projections in the other, over the same files, started and restarted by `npm start`. Unset:
   * two where the machine has two cores or more and the embedded default runs (ROLE=all, no
   * distributed store), so `npm start` uses both (docs/decisions/0147-two-processes-by-default.md).
   */
  PROCESSES: z.coerce.number().int().min(1).max(2).optional(),
  /**
   * How far each process's heap may grow past what it held live after a full collection, in
   * percent (V8's `--heap-growing-percent`), so memory follows live data: 20 lets a heap of 100 MB
   * live grow to 120 MB before the next full collection. 0 leaves it to V8, which grows it up to
   * 4x under a busy load (the engine peaked at 799 MB with 100,000 tasks in flight, against
   * 340 MB at 20; docs/decisions/0148). Lower costs more collections; it never caps the heap.
   */
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(400).default(20),
  /** Where the engine process of PROCESSES=2 answers /readyz and /metrics (loopback); default PORT + 1. */
  ENGINE_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** How often an idle subscription looks for events another process appended (SQLite event store). */
  EVENT_POLL_INTERVAL_MS: z.coerce.number().int().min(1).max(10_000).default(200),
  /** Overrides every family's poll interval (tests, benchmarks). */
  POLL_INTERVAL_MS: z.coerce.number().int().min(1).optional(),
  /** Signs asset URLs; generated into DATA_DIR on first start when not set. Shared by all instances. */
  ASSET_SIGNING_SECRET: z.string().min(16).optional(),
  /** Step length of the built-in simulator (0 = finished at once). */
  SIM_STEP_MS: z.coerce.number().int().min(0).default(150),
  /** Overrides every family's maximum task age (tests). */
  TASK_MAX_AGE_SECONDS: z.coerce.number().int().min(1).optional(),
  /** Seconds between callback attempts (comma list): ~27 h in all, then dead-lettered. */
  CALLBACK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, 'a comma-separated list of seconds')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((v) => v.split(',').map(Number)),
  CALLBACK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** How often due callbacks are looked for. */
  CALLBACK_CHECK_MS: z.coerce.number().int().min(10).default(1000),
  /** Partitions of every bus topic (task ownership follows them); the same on every instance. */
  BUS_PARTITIONS: z.coerce.number().int().min(1).max(1024).default(16),
  /** Where channel base URLs that are paths (`/_sim`) resolve; default this gateway itself. */
  SIMULATOR_URL: z.string().url().optional(),
  /** Upper bound of upstream calls in flight per channel. */
  CHANNEL_CONCURRENCY: z.coerce.number().int().min(1).default(32),
  /** Which proxies' X-Forwarded-* headers are believed (client address, https); off by default. */
  TRUST_PROXY: trustProxy,
  /** `auto`: the session cookie is Secure when the request came over https (TRUST_PROXY decides behind a proxy). */
  SESSION_COOKIE_SECURE: z.enum(['auto', 'always', 'never']).default('auto'),
  /** Login attempts per minute from one client address, and for one username (0 = no limit). */
  LOGIN_RATE_LIMIT: z.coerce.number().int().min(0).default(30),
  LOGIN_RATE_LIMIT_PER_USER: z.coerce.number().int().min(0).default(10),
  /** Time to receive a whole request, headers and body (0 = no limit); handlers and responses are not bounded by it. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).default(60_000),
  /** On shutdown, how long requests in flight may take to finish before their connections are cut. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(8_000),
  /** Consecutive retryable failures of a channel that open its circuit (it is skipped until a trial call succeeds). */
  CHANNEL_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1000).default(5),
  /** How long an open circuit stays open before one trial call goes through. */
  CHANNEL_BREAKER_HALF_OPEN_MS: z.coerce.number().int().min(100).default(30_000),
  /** Interval of the health check of every enabled channel (0 = off). */
  CHANNEL_HEALTH_INTERVAL_MS: z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || ms >= 100, 'must be 0 (off) or at least 100')
    .default(60_000),
  /** Requests per minute per API key (0 = no limit); a token's `rate_limit_per_minute` overrides it. */
  RATE_LIMIT_PER_MINUTE: count(),
  /** Tasks one account may have in flight, reserved and not yet settled or released (0 = no limit). */
  MAX_TASKS_IN_FLIGHT_PER_ACCOUNT: count(),
  /** Requests this instance works on at once before it sheds more with 429 (0 = no limit). */
  MAX_REQUESTS_IN_FLIGHT: count(),
  /** Mean event-loop delay past which requests are shed with 429 (0 = not watched). */
  MAX_EVENT_LOOP_DELAY_MS: count(),
  /** Heap in use past which requests are shed with 429 (0 = not watched). */
  MAX_HEAP_USED_BYTES: count(),
  /** Bearer token of `GET /metrics` (Prometheus); unset: no metrics are collected and /metrics is 404. */
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,}$/, 'at least 16 printable ASCII characters, no spaces (the bearer Prometheus sends); unset it to turn /metrics off')
    .optional(),
  /** Encrypts upstream channel keys at rest (events and views hold only ciphertext). Unset: generated into DATA_DIR. */
  CHANNEL_KEYS_SECRET: z
    .string()
    .refine((v) => parseChannelKeysSecret(v) !== undefined, `must be ${CHANNEL_KEYS_SECRET_FORMAT}`)
    .optional(),
  /** Older secrets, comma-separated: still decrypt during a rotation, never encrypt. */
  CHANNEL_KEYS_SECRET_PREVIOUS: z
    .string()
    .default('')
    .transform((text, ctx) => {
      const list = text
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean);
      const bad = list.findIndex((e) => parseChannelKeysSecret(e) === undefined);
      if (bad >= 0) ctx.addIssue({ code: 'custom', message: `entry ${bad + 1} is not ${CHANNEL_KEYS_SECRET_FORMAT}` });
      return list;
    }),
});

/** The configuration's names for the environment's values (its type is Config's). */
/** Both cores for the embedded default; one process wherever else, or where there is one core. */
function defaultProcesses(e: z.infer<typeof Env>): 1 | 2 {
  const embedded = e.ROLE === 'all' && !e.KAFKA_BROKERS && !e.EVENTSTORE_URL && !e.MONGO_URL && !e.POSTGRES_URL;
  return embedded && availableParallelism() >= 2 ? 2 : 1;
}

function fromEnv(e: z.infer<typeof Env>) {
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: resolve(e.DATA_DIR),
    publicBaseUrl: e.PUBLIC_BASE_URL,
    adminUsername: e.ADMIN_USERNAME,
    adminPassword: e.ADMIN_PASSWORD,
    logLevel: e.LOG_LEVEL,
    bootstrapFile: e.BOOTSTRAP_FILE,
    simulator: e.SIMULATOR,
    nodeEnv: e.NODE_ENV,
    assetRetentionSeconds: e.ASSET_RETENTION_SECONDS,
    reservationGraceSeconds: e.RESERVATION_GRACE_SECONDS,
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    allowLoopbackOutbound: e.ALLOW_LOOPBACK_OUTBOUND,
    callbackAllowedDestinations: e.CALLBACK_ALLOWED_DESTINATIONS,
    eventStoreUrl: e.EVENTSTORE_URL,
    mongoUrl: e.MONGO_URL,
    postgresUrl: e.POSTGRES_URL,
    postgresSchema: e.POSTGRES_SCHEMA,
    kafkaBrokers: e.KAFKA_BROKERS,
    kafkaPrefix: e.KAFKA_PREFIX,
    role: e.ROLE,
    processes: e.PROCESSES ?? defaultProcesses(e),
    enginePort: e.ENGINE_PORT,
    heapGrowthPercent: e.HEAP_GROWTH_PERCENT,
    eventPollIntervalMs: e.EVENT_POLL_INTERVAL_MS,
    pollIntervalMs: e.POLL_INTERVAL_MS,
    taskMaxAgeSeconds: e.TASK_MAX_AGE_SECONDS,
    callbackRetryScheduleSeconds: e.CALLBACK_RETRY_SCHEDULE as readonly number[],
    callbackTimeoutMs: e.CALLBACK_TIMEOUT_MS,
    callbackCheckMs: e.CALLBACK_CHECK_MS,
    busPartitions: e.BUS_PARTITIONS,
    simulatorUrl: e.SIMULATOR_URL,
    assetSigningSecret: e.ASSET_SIGNING_SECRET,
    simStepMs: e.SIM_STEP_MS,
    channelConcurrency: e.CHANNEL_CONCURRENCY,
    trustProxy: e.TRUST_PROXY,
    sessionCookieSecure: e.SESSION_COOKIE_SECURE,
    loginRateLimitPerIp: e.LOGIN_RATE_LIMIT,
    loginRateLimitPerUser: e.LOGIN_RATE_LIMIT_PER_USER,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    channelBreakerFailures: e.CHANNEL_BREAKER_FAILURES,
    channelBreakerHalfOpenMs: e.CHANNEL_BREAKER_HALF_OPEN_MS,
    channelHealthIntervalMs: e.CHANNEL_HEALTH_INTERVAL_MS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    maxTasksInFlightPerAccount: e.MAX_TASKS_IN_FLIGHT_PER_ACCOUNT,
    maxRequestsInFlight: e.MAX_REQUESTS_IN_FLIGHT,
    maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: e.MAX_HEAP_USED_BYTES,
    responseSchemas: e.RESPONSE_SCHEMAS,
    metricsToken: e.METRICS_TOKEN,
    channelKeysSecret: e.CHANNEL_KEYS_SECRET,
    channelKeysSecretPrevious: e.CHANNEL_KEYS_SECRET_PREVIOUS as readonly string[],
  };
}

export type Config = Readonly<ReturnType<typeof fromEnv>>;

/** The events are on a server other instances can share (EventStoreDB, PostgreSQL), not in DATA_DIR. */
export function sharedEventLog(config: Pick<Config, 'eventStoreUrl' | 'postgresUrl'>): boolean {
  return Boolean(config.eventStoreUrl || config.postgresUrl);
}

/** The views are on a server other instances can share (MongoDB, PostgreSQL), not in DATA_DIR. */
export function sharedViews(config: Pick<Config, 'mongoUrl' | 'postgresUrl'>): boolean {
  return Boolean(config.mongoUrl || config.postgresUrl);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${issues}`);
  }
  const config: Config = { ...fromEnv(parsed.data), ...overrides };
  // A worker delivers callbacks whose bodies carry result URLs signed on its base; its listen
  // address (a container's loopback) is no address a client can reach.
  if ((config.role === 'worker' || config.role === 'engine') && !config.publicBaseUrl) {
    throw new Error(
      `invalid configuration: PUBLIC_BASE_URL: required when ROLE=${config.role} (the callbacks it delivers carry result URLs signed on it); set it to where clients reach the API, e.g. http://localhost:3001`,
    );
  }
  // The embedded bus keeps consumer-group membership in the memory of one process: a worker or
  // projector beside other processes on it would own every partition alone (two workers would
  // both dispatch every task) and publish where no other process consumes.
  if (config.processes === 2 && (config.role !== 'all' || config.kafkaBrokers || sharedEventLog(config) || sharedViews(config))) {
    throw new Error(
      'invalid configuration: PROCESSES: 2 splits the embedded default (ROLE=all on SQLite, no KAFKA_BROKERS, EVENTSTORE_URL, MONGO_URL or POSTGRES_URL) into an API and an engine process; the distributed deployment splits by ROLE',
    );
  }
  if ((config.role === 'worker' || config.role === 'projector') && !config.kafkaBrokers) {
    throw new Error(
      `invalid configuration: KAFKA_BROKERS: required when ROLE=${config.role} (the roles of the distributed deployment share work through Kafka; the embedded bus serves one process); set it, or run ROLE=all`,
    );
  }
  // Channel keys are encrypted with it: instances on one event log must share it, and it must
  // outlive every container; a secret generated into DATA_DIR would be neither (docs/decisions/0107-channel-keys-secret.md).
  if (sharedEventLog(config) && !config.channelKeysSecret) {
    throw new Error(
      `invalid configuration: CHANNEL_KEYS_SECRET: required when ${config.eventStoreUrl ? 'EVENTSTORE_URL' : 'POSTGRES_URL'} is set (every instance on the event log encrypts and reads channel keys with it); generate one with \`openssl rand -base64 32\``,
    );
  }
  return config;
}
