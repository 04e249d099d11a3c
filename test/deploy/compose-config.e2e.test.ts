/**
 * `docker-compose.yml` (EventStoreDB, MongoDB, Kafka) and `docker-compose.postgres.yml`
 * (PostgreSQL, Kafka) as the compose tool itself reads them: `config` validates the file (no
 * Docker engine needed), and each gateway service's environment is then fed to the gateway's
 * own configuration loader, so a setting a role requires (PUBLIC_BASE_URL for the worker,
 * KAFKA_BROKERS for worker and projector, CHANNEL_KEYS_SECRET with EVENTSTORE_URL) cannot go
 * missing from the file unnoticed.
 *
 * The compose plugin (`docker compose`) prints JSON with `--format json`; Debian's
 * docker-compose 1.29 prints YAML only, which the Python it runs on (with PyYAML, one of its
 * own dependencies) turns into JSON. `.ci/run` installs docker-compose when neither exists.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeStores } from '../../src/adapters/select.js';
import { loadConfig } from '../../src/config.js';

type Service = {
  image?: string;
  build?: unknown;
  deploy?: { replicas?: number };
  environment?: Record<string, string | null>;
  ports?: { published: number | string; target: number }[];
};

function composeConfig(file: string): { tool: string; services: Record<string, Service> } | undefined {
  const plugin = spawnSync('docker', ['compose', '-f', file, 'config', '--format', 'json'], { encoding: 'utf8' });
  if (plugin.status === 0) return { tool: 'docker compose', services: (JSON.parse(plugin.stdout) as { services: Record<string, Service> }).services };
  const v1 = spawnSync('docker-compose', ['-f', file, 'config'], { encoding: 'utf8' });
  if (v1.error) return undefined;
  expect(v1.stderr).toBe('');
  expect(v1.status).toBe(0);
  const json = spawnSync('/usr/bin/python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], {
    input: v1.stdout,
    encoding: 'utf8',
  });
  expect(json.status).toBe(0);
  return { tool: 'docker-compose', services: (JSON.parse(json.stdout) as { services: Record<string, Service> }).services };
}

/** Each file, and which stores every gateway service of it is configured with. */
const FILES = [
  { file: 'docker-compose.yml', stores: { events: 'EventStoreDB', views: 'MongoDB' } },
  { file: 'docker-compose.postgres.yml', stores: { events: 'PostgreSQL', views: 'PostgreSQL' } },
];

const available = composeConfig(FILES[0]!.file) !== undefined;
if (!available) {
  if (process.env.REQUIRE_COMPOSE === '1')
    throw new Error('REQUIRE_COMPOSE=1 (set by .ci/run), but neither `docker compose` nor `docker-compose` is installed');
  console.log('[deploy] compose config check skipped: neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)');
}

for (const { file, stores } of FILES) {
  const config = available ? composeConfig(file) : undefined;
  describe.skipIf(!config)(`${file} (${config?.tool ?? 'no compose tool'})`, () => {
    const services = config?.services ?? {};
    const gateways = Object.entries(services).filter(([, s]) => s.environment?.ROLE);
    const envOf = (s: Service) => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v ?? '']));

    it('has every role of the distributed deployment', () => {
      expect(gateways.map(([, s]) => s.environment!.ROLE).sort()).toEqual(['api', 'api', 'projector', 'worker']);
    });

    it('runs two projectors, which share the projections and fail over (decision 0154)', () => {
      expect(services.projector?.deploy?.replicas).toBe(2);
    });

    it('every gateway service runs the one image, built once (by the one service with a build section)', () => {
      expect(new Set(gateways.map(([, s]) => s.image))).toEqual(new Set(['media-gateway:local']));
      expect(gateways.filter(([, s]) => s.build !== undefined)).toHaveLength(1);
    });

    it("every gateway service's environment is one the gateway starts with", () => {
      for (const [name, service] of gateways) {
        const loaded = loadConfig(envOf(service));
        expect(loaded.role, name).toBe(service.environment!.ROLE);
        expect(loaded.kafkaBrokers, name).toBeTruthy();
        const chosen = describeStores(loaded);
        expect({ events: chosen.events.split(' ')[0], views: chosen.views.split(' ')[0] }, name).toEqual(stores);
        // Required with EVENTSTORE_URL and POSTGRES_URL (loadConfig refuses without it).
        expect(loaded.channelKeysSecret, name).toBeTruthy();
      }
    });

    it('runs the Kafka version CI tests against (scripts/kafka-local.sh), and lets callbacks reach only a named in-deployment receiver', () => {
      const tested = /^VERSION="\$\{KAFKA_LOCAL_VERSION:-([\d.]+)\}"$/m.exec(readFileSync('scripts/kafka-local.sh', 'utf8'))?.[1];
      expect(services.kafka?.image).toBe(`apache/kafka:${tested}`);
      for (const [name, service] of gateways)
        expect(loadConfig(envOf(service)).callbackAllowedDestinations, name).toEqual({ networks: [], hosts: new Set(['receiver']) });
    });

    it('every gateway service encrypts channel keys with the same secret', () => {
      expect(new Set(gateways.map(([, s]) => s.environment!.CHANNEL_KEYS_SECRET)).size).toBe(1);
    });

    it("the worker signs callback URLs on a base the host reaches: an api service's published port", () => {
      const [, worker] = gateways.find(([, s]) => s.environment!.ROLE === 'worker')!;
      const base = new URL(worker.environment!.PUBLIC_BASE_URL!);
      const apiPorts = gateways.filter(([, s]) => s.environment!.ROLE === 'api').flatMap(([, s]) => (s.ports ?? []).map((p) => Number(p.published)));
      expect(['localhost', '127.0.0.1']).toContain(base.hostname);
      expect(apiPorts).toContain(Number(base.port));
    });

    it('each api signs on its own published port', () => {
      for (const [name, api] of gateways.filter(([, s]) => s.environment!.ROLE === 'api')) {
        const base = new URL(api.environment!.PUBLIC_BASE_URL!);
        expect(
          (api.ports ?? []).map((p) => Number(p.published)),
          name,
        ).toContain(Number(base.port));
      }
    });
  });
}
