/**
 * Detects once whether real backends can be reached for the distributed adapters' contract
 * suites: a Docker engine (testcontainers) or server URLs in the environment. Suites read
 * the result from process.env and skip with a visible reason; REQUIRE_DOCKER=1 forbids skipping,
 * REQUIRE_KAFKA=1 forbids skipping the Kafka suite, REQUIRE_POSTGRES=1 the PostgreSQL suites. Builds the gateway `npm start` runs (dist/)
 * when its sources changed.
 */
import { execFileSync } from 'node:child_process';
import { ensureGatewayBuilt } from '../../scripts/gateway-build.js';

function dockerEngineAnswers(): boolean {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'pipe', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

export default async function setup(): Promise<void> {
  // `npm start` runs the compiled gateway: built once here, so tests that start it in parallel
  // neither build it at once nor wait for a build inside their own time-outs.
  await ensureGatewayBuilt();
  const docker = dockerEngineAnswers();
  process.env.GATEWAY_TEST_DOCKER = docker ? '1' : '0';
  if (!docker && process.env.REQUIRE_DOCKER === '1') {
    throw new Error('REQUIRE_DOCKER=1 but no Docker engine answers `docker info`');
  }
  // CI sets REQUIRE_KAFKA=1 after starting a broker (scripts/kafka-local.sh): the Kafka bus
  // contract suite must run there, never skip.
  if (process.env.REQUIRE_KAFKA === '1' && !docker && !process.env.KAFKA_BROKERS?.trim()) {
    throw new Error('REQUIRE_KAFKA=1 but KAFKA_BROKERS is not set and no Docker engine answers: run `bash scripts/kafka-local.sh start`');
  }
  // Likewise REQUIRE_POSTGRES=1 after scripts/postgres-local.sh: the PostgreSQL suites must run.
  if (process.env.REQUIRE_POSTGRES === '1' && !docker && !process.env.POSTGRES_URL?.trim()) {
    throw new Error('REQUIRE_POSTGRES=1 but POSTGRES_URL is not set and no Docker engine answers: run `bash scripts/postgres-local.sh start`');
  }
}
